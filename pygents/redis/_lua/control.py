"""The Lua scripts of the control actions and of the survey (see `pygents.redis._producer.control`
and `pygents.redis._producer.survey`).

Each script names only keys of one mailbox (`Keys`), so that they all hash to one
slot once the keys carry a hash tag. A reply stream is not a mailbox key: where an
action must tell a caller, the script returns what the caller needs and Python writes
the reply afterwards.

* ``CANCEL`` — find a turn by uuid in a mailbox. Queued (never delivered), or handed
  back by a paused or stopping worker and running nowhere: it is removed atomically,
  so no worker can take it any more. Delivered and held by a worker: the request is
  left in the control hash, where that worker's watcher finds it.
* ``RETRY`` — move a dead letter back onto its mailbox as a fresh entry, atomically
  (a fresh delivery: a new id, counted from one).
* ``SURVEY`` — everything a dashboard shows of one mailbox, read-only (``EVAL_RO``),
  returned as one JSON document; every read is bounded and type-checked, so that a
  hostile keyspace gives counted malformed rows, not an error.
"""

from __future__ import annotations

from typing import Final

__all__ = ["CANCEL", "HANDED_BACK_IDLE", "RETRY", "SURVEY", "WORKER_FIELDS"]

HANDED_BACK_IDLE: Final = 10 * 365 * 24 * 3600 * 1000
"""How long a handed-back turn looks idle (ms): longer than any visibility timeout,
so that the next worker's keeper takes it at once; shorter than the time since the
epoch (Redis ignores an idle time that would put the delivery before it)."""

WORKER_FIELDS: Final = ("drain", "draining", "paused", "identity")
"""The control hash's fields about one worker, ``<kind>:<worker>``: a drain request,
and what the worker says (it drains, it applies the pause, who it is in its
telemetry: see `pygents.redis._worker.watch`). Cleared when it leaves, and when a worker of
the same name starts (left by one that died)."""

# KEYS: mailbox, control, errors. ARGV: group, turn uuid, a message id to try first
# (or ""), the idle time (ms) from which a pending entry counts as handed back.
# Returns {"missing"}, {"running", id} or {"removed", id, envelope}. A request is the
# field "cancel:<message id>" (a worker asks for the ids it holds, see `_worker.watch`).
# Stale requests (their entry is gone) are pruned on the way, which bounds the hash
# (a hash grown beyond 10,000 fields by someone else is left alone).
CANCEL: Final = """
local mailbox = redis.call('TYPE', KEYS[1])['ok']
local control = redis.call('TYPE', KEYS[2])['ok']
if mailbox ~= 'stream' or (control ~= 'hash' and control ~= 'none') then
  return {'missing'}
end
local uuid = ARGV[2]
local function envelope(fields)
  for f = 1, #fields, 2 do
    if fields[f] == 'turn' and string.find(fields[f + 1], uuid, 1, true) then
      local ok, env = pcall(cjson.decode, fields[f + 1])
      if ok and type(env) == 'table' and type(env['turn']) == 'table'
         and env['turn']['uuid'] == uuid then
        return fields[f + 1]
      end
    end
  end
  return nil
end
if control == 'hash' and redis.call('HLEN', KEYS[2]) <= 10000 then
  local flat = redis.call('HGETALL', KEYS[2])
  for i = 1, #flat, 2 do
    if string.sub(flat[i], 1, 7) == 'cancel:' then
      local id = string.sub(flat[i], 8)
      local e = redis.pcall('XRANGE', KEYS[1], id, id)
      if type(e) ~= 'table' or e['err'] or #e == 0 then
        redis.call('HDEL', KEYS[2], flat[i])
      end
    end
  end
end
local found, payload = nil, nil
if ARGV[3] ~= '' then
  local e = redis.pcall('XRANGE', KEYS[1], ARGV[3], ARGV[3])
  if type(e) == 'table' and not e['err'] and e[1] then
    payload = envelope(e[1][2])
    if payload then found = e[1][1] end
  end
end
local cursor = '-'
while not found do
  local chunk = redis.call('XRANGE', KEYS[1], cursor, '+', 'COUNT', 500)
  for _, e in ipairs(chunk) do
    payload = envelope(e[2])
    if payload then
      found = e[1]
      break
    end
  end
  if #chunk < 500 then break end
  cursor = '(' .. chunk[#chunk][1]
end
if not found then return {'missing'} end
local p = redis.pcall('XPENDING', KEYS[1], ARGV[1], found, found, 1)
local pending = type(p) == 'table' and not p['err'] and p[1]
if pending and tonumber(p[1][3]) < tonumber(ARGV[4]) then
  redis.call('HSET', KEYS[2], 'cancel:' .. found, uuid)
  return {'running', found}
end
if pending then redis.call('XACK', KEYS[1], ARGV[1], found) end
redis.call('XDEL', KEYS[1], found)
redis.call('HDEL', KEYS[2], 'cancel:' .. found)
if redis.call('TYPE', KEYS[3])['ok'] == 'hash' then redis.call('HDEL', KEYS[3], found) end
return {'removed', found, payload}
"""

# KEYS: dead-letter stream, mailbox. ARGV: dead-letter id, the mailbox's maxlen.
# Returns {"missing"}, {"empty"} (no payload to replay), {"full", depth},
# {"mailbox", type} (the mailbox key holds something else) or {"ok", new id, payload}.
RETRY: Final = """
if redis.call('TYPE', KEYS[1])['ok'] ~= 'stream' then return {'missing'} end
local e = redis.call('XRANGE', KEYS[1], ARGV[1], ARGV[1])
if not e[1] then return {'missing'} end
local payload = ''
for f = 1, #e[1][2], 2 do
  if e[1][2][f] == 'payload' then payload = e[1][2][f + 1] end
end
if payload == '' then return {'empty'} end
local kind = redis.call('TYPE', KEYS[2])['ok']
if kind ~= 'stream' and kind ~= 'none' then return {'mailbox', kind} end
local depth = redis.call('XLEN', KEYS[2])
if depth + 1 > tonumber(ARGV[2]) then return {'full', depth} end
local id = redis.call('XADD', KEYS[2], '*', 'turn', payload)
redis.call('XDEL', KEYS[1], ARGV[1])
return {'ok', id, payload}
"""

# KEYS: mailbox, dead, workers, control. ARGV: group, rows, characters kept of a
# preview (one more than shown, so that the caller's cut marks what it left out).
# Returns a JSON document (see `pygents.redis._producer.survey.read_one`). The turns' envelopes
# are decoded here, so that only a bounded preview of each crosses the network.
SURVEY: Final = """#!lua flags=no-writes
local rows = tonumber(ARGV[2])
local preview = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {now = now, depth = 0, dead = 0, workers = {}, live = 0, consumers = {},
             control = {}, pending = {}, dead_rows = {}, queued = {}, malformed = 0,
             bad_keys = {}}
local function kind(k, want)
  local found = redis.call('TYPE', KEYS[k])['ok']
  if found == want then return true end
  if found ~= 'none' then
    out.bad_keys[#out.bad_keys + 1] = KEYS[k] .. ' is a ' .. found .. ', not a ' .. want
  end
  return false
end
local function field(fields, name)
  for f = 1, #fields, 2 do
    if fields[f] == name then return fields[f + 1] end
  end
  return nil
end
local function turn(fields)
  local raw = fields and field(fields, 'turn')
  if not raw then return nil end
  local ok, env = pcall(cjson.decode, raw)
  if not ok or type(env) ~= 'table' or type(env['turn']) ~= 'table' then return nil end
  local tr = env['turn']
  if type(tr['uuid']) ~= 'string' or type(tr['tool_name']) ~= 'string' then return nil end
  local args = {}
  if type(tr['args']) == 'table' then args[#args + 1] = tr['args'] end
  if type(tr['kwargs']) == 'table' and next(tr['kwargs']) then args[#args + 1] = tr['kwargs'] end
  local okp, text = pcall(cjson.encode, args)
  return {uuid = tr['uuid'], tool = tr['tool_name'],
          timeout = type(tr['timeout']) == 'number' and tr['timeout'] or false,
          args = okp and string.sub(text, 1, preview) or ''}
end
if kind(1, 'stream') then
  out.depth = redis.call('XLEN', KEYS[1])
  local last = nil
  local groups = redis.pcall('XINFO', 'GROUPS', KEYS[1])
  if type(groups) == 'table' and not groups['err'] then
    for _, g in ipairs(groups) do
      if field(g, 'name') == ARGV[1] then last = field(g, 'last-delivered-id') end
    end
  end
  if last then
    out.pending_total = redis.call('XPENDING', KEYS[1], ARGV[1])[1]
    local consumers = redis.call('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])
    for i = 1, math.min(#consumers, rows) do
      local c = consumers[i]
      -- Live as `Mailboxes.stats` says it: a heartbeat not expired (asked of each
      -- listed consumer: the workers listed below are bounded by rows too).
      local beat = redis.pcall('ZSCORE', KEYS[3], field(c, 'name'))
      out.consumers[#out.consumers + 1] = {field(c, 'name'), field(c, 'pending'),
                                           field(c, 'idle'),
                                           type(beat) == 'string' and tonumber(beat) > now}
    end
    for _, p in ipairs(redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', rows)) do
      local e = redis.call('XRANGE', KEYS[1], p[1], p[1])
      local info = turn(e[1] and e[1][2])
      if not info then out.malformed = out.malformed + 1; info = {} end
      out.pending[#out.pending + 1] = {p[1], p[2], p[3], p[4], info.uuid or '',
                                       info.tool or ''}
    end
  end
  local queued = redis.call('XRANGE', KEYS[1], last and ('(' .. last) or '-', '+',
                            'COUNT', rows)
  for i, e in ipairs(queued) do
    local info = turn(e[2])
    if not info then out.malformed = out.malformed + 1; info = {} end
    out.queued[#out.queued + 1] = {i, e[1], info.uuid or '', info.tool or '',
                                   info.timeout or false, info.args or ''}
  end
end
if kind(2, 'stream') then
  out.dead = redis.call('XLEN', KEYS[2])
  for _, e in ipairs(redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', rows)) do
    local info = turn({'turn', field(e[2], 'payload') or ''}) or {}
    out.dead_rows[#out.dead_rows + 1] = {
      e[1], info.uuid or '', info.tool or '',
      string.sub(field(e[2], 'error') or '', 1, preview),
      string.sub(field(e[2], 'reason') or '', 1, preview),
      field(e[2], 'deliveries') or '0'}
  end
end
if kind(3, 'zset') then
  out.live = redis.call('ZCOUNT', KEYS[3], '(' .. now, '+inf')
  out.workers = redis.call('ZRANGEBYSCORE', KEYS[3], '(' .. now, '+inf', 'WITHSCORES',
                           'LIMIT', 0, rows)
end
if kind(4, 'hash') then
  if redis.call('HLEN', KEYS[4]) <= 5 * rows then
    out.control = redis.call('HGETALL', KEYS[4])
  else
    out.control = {'paused', redis.call('HGET', KEYS[4], 'paused') or ''}
    out.malformed = out.malformed + 1
  end
end
return cjson.encode(out)
"""
