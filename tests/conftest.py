pytest_plugins = ["pygents.pytest_plugin"]
