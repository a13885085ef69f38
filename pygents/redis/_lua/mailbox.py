"""The Redis keys of the mailboxes and the Lua scripts that change them atomically.

Every change that must not be half done is one script, run atomically by Redis:

* ``PUT`` — refuse when the mailbox is full or the tool unknown to its workers, else
  add every turn (all or nothing): no race between the length check and the add.
* ``RECORD`` — for each finished turn, acknowledge it and, *only if that
  acknowledgement took it out of the pending list*, delete it from the mailbox and add
  its outcome to the caller's reply stream. A turn run twice (its first worker was
  presumed dead) therefore has exactly one recorded outcome.
* ``DEAD`` — the same, moving the entry to the dead-letter stream.
* ``READ`` — a worker's read of turns waiting already, as one string (see below).
* ``CLAIM`` — take over turns idle longer than the visibility timeout, with their
  delivery counts and last recorded error.
* ``HEARTBEAT`` — a worker says it is alive, keeps its own turns from looking idle,
  and removes consumers left behind by dead workers once they hold nothing.
* ``HAND_BACK`` — a stopping worker gives back the turns it read ahead and never
  started, without counting their delivery.
* ``ANNOUNCE`` and ``FULL_GROUP`` — a worker's set-up, which a full Redis must not
  prevent (see each).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Final

from redis.crc import key_slot

__all__ = [
    "ANNOUNCE",
    "CLAIM",
    "DEAD",
    "FULL_GROUP",
    "GROUP",
    "HAND_BACK",
    "HEARTBEAT",
    "PUT",
    "READ",
    "RECORD",
    "Keys",
    "hash_tagged",
]

GROUP: Final = "pygents"
"""The consumer group every worker of every mailbox belongs to."""


@dataclass(frozen=True, slots=True)
class Keys:
    """The keys of one agent's mailbox, under a prefix."""

    mailbox: str  # the stream of turns
    dead: str  # the dead-letter stream
    tools: str  # set: the tools the agent's workers have
    workers: str  # sorted set: live workers, scored by heartbeat expiry (ms)
    errors: str  # hash: message id -> last error of an unfinished delivery
    # hash: what the workers are asked to do (see `pygents.redis._producer.control`):
    # "paused", "cancel:<message id>" -> turn uuid, "drain:<worker>" -> time (ms),
    # and what workers say: "paused:<worker>", "draining:<worker>"
    control: str
    # On a Redis Cluster, the part after "<prefix>:<kind>:" of every key above: it
    # starts with the mailbox's hash tag ("{agent}"), so that all its keys — and its
    # callers' reply streams, `reply_key` — hash to one slot and every script over
    # them runs on one shard. "" on a single server, whose key names stay as they
    # always were (no migration).
    tag: str = ""

    @classmethod
    def of(cls, prefix: str, agent: str, *, tagged: bool = False) -> Keys:
        name = hash_tagged(agent) if tagged else agent
        return cls(
            f"{prefix}:mailbox:{name}",
            f"{prefix}:dead:{name}",
            f"{prefix}:tools:{name}",
            f"{prefix}:workers:{name}",
            f"{prefix}:errors:{name}",
            f"{prefix}:control:{name}",
            name if tagged else "",
        )

    def reply_key(self, prefix: str, client_id: str) -> str:
        """The reply stream of the client ``client_id`` for turns put on this mailbox:
        on a cluster one per mailbox (in its slot: a worker records an outcome and
        acknowledges its turn in one script), on a single server one per client."""
        if self.tag:
            return f"{prefix}:replies:{self.tag}:{client_id}"
        return f"{prefix}:replies:{client_id}"

    def holds(self, key: str) -> bool:
        """Whether a script over this mailbox may also name ``key``: always on a single
        server; on a cluster only a key in the mailbox's hash slot (a reply stream named
        by an entry written by hand may be anywhere)."""
        return not self.tag or key_slot(key.encode()) == key_slot(self.mailbox.encode())


def hash_tagged(agent: str) -> str:
    """``{agent}``: a hash tag for every key of the agent's mailbox.

    Redis hashes only the text between the first ``{`` and the next ``}``, so a name
    with a brace of its own cannot be its own tag: it gets a digest of the name as its
    tag, followed by the name — ``{#3f2a...}:a{b}``, distinct from any plain name's
    ``{name}`` (which has nothing after the brace).
    """
    if "{" not in agent and "}" not in agent:
        return f"{{{agent}}}"
    digest = hashlib.sha256(agent.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{{#{digest}}}:{agent}"


# KEYS: mailbox, tools, and the agents set unless on a cluster (another slot: then
# written by the caller, see `Mailboxes.put_many`).
# ARGV: maxlen, agent, tool count k, k tool names, then one payload per turn.
# Returns the new ids as one string, separated by spaces (one bulk reply: a hundred
# cost the client's parser a hundred), or {"full", depth} / {"tool", name}.
PUT: Final = """
local maxlen = tonumber(ARGV[1])
local k = tonumber(ARGV[3])
local first = 4 + k
local depth = redis.call('XLEN', KEYS[1])
if depth + (#ARGV - first + 1) > maxlen then
  return {'full', depth}
end
if redis.call('EXISTS', KEYS[2]) == 1 then
  for i = 4, 3 + k do
    if redis.call('SISMEMBER', KEYS[2], ARGV[i]) == 0 then
      return {'tool', ARGV[i]}
    end
  end
end
if KEYS[3] then redis.call('SADD', KEYS[3], ARGV[2]) end
local ids = {}
for i = first, #ARGV do
  ids[#ids + 1] = redis.call('XADD', KEYS[1], '*', 'turn', ARGV[i])
end
return table.concat(ids, ' ')
"""

# The worker's scripts below read before they write, and check the type of every key
# a caller named (a reply stream is whatever the entry says): a script that fails
# half-way keeps what it did before failing, so none may fail after its first write.
# The first write acknowledges and deletes a turn: on a full Redis (``maxmemory`` and
# ``noeviction``), which refuses a script's writes that may grow memory only until it
# has written, that first write frees memory and lets the outcome follow. A script
# refused before writing anything changed nothing and is simply retried.

# KEYS: for each mailbox, its mailbox, errors and dead-letter keys (in that order),
# then the reply streams the records refer to.
# ARGV: group, reply maxlen, reply ttl (ms), worker, then one value per record (one
# value, not five: fewer arguments to encode and send):
#     "<mailbox index> <reply index> <message id> <deliveries> <record JSON>"
# where the mailbox index points into KEYS (0: a streamed value, nothing to
# acknowledge), the reply index too (0: nobody waits), and the message id is "-" for a
# value. Records for one reply stream are appended as one entry holding a JSON array.
# A turn whose reply key holds something other than a stream is dead-lettered instead,
# alone. Returns {turns acknowledged, then message id and reason of each dead letter}.
RECORD: Final = """
local group, worker = ARGV[1], ARGV[4]
local kinds = {}
local function kind(k)
  local t = kinds[k]
  if t == nil then
    t = redis.call('TYPE', KEYS[k])['ok']
    kinds[k] = t
  end
  return t
end
local function usable(k)
  local t = kind(k)
  return t == 'stream' or t == 'none'
end
-- Adds item to the list of key in lists, the keys kept in the order first seen.
local function append(lists, keys, key, item)
  local list = lists[key]
  if list == nil then
    list = {}
    lists[key] = list
    keys[#keys + 1] = key
  end
  list[#list + 1] = item
end
local batches, order, out = {}, {}, {0}
local acked, mailboxes = {}, {}  -- ids acknowledged, by mailbox index
for i = 5, #ARGV do
  local a = ARGV[i]
  local s1 = string.find(a, ' ', 1, true)
  local s2 = string.find(a, ' ', s1 + 1, true)
  local s3 = string.find(a, ' ', s2 + 1, true)
  local s4 = string.find(a, ' ', s3 + 1, true)
  local mk = tonumber(string.sub(a, 1, s1 - 1))
  local rk = tonumber(string.sub(a, s1 + 1, s2 - 1))
  local record = string.sub(a, s4 + 1)
  local keep = rk > 0 and usable(rk)
  if mk > 0 then
    local id = string.sub(a, s2 + 1, s3 - 1)
    local hashed = kind(mk + 1) == 'hash'
    if rk > 0 and not keep then
      local dead = usable(mk + 2)
      local entry = redis.pcall('XRANGE', KEYS[mk], id, id)
      if dead and entry[1] and redis.pcall('XACK', KEYS[mk], group, id) == 1 then
        local payload, fields = '', entry[1][2]
        for f = 1, #fields, 2 do
          if fields[f] == 'turn' then payload = fields[f + 1] end
        end
        local reason = "the reply stream '" .. KEYS[rk] .. "' is a " .. kind(rk)
          .. ', not a stream: the turn ran, but its outcome cannot reach the caller'
        redis.call('XADD', KEYS[mk + 2], '*', 'message_id', id, 'reason', reason,
                   'error', string.sub(record, 1, 2000),
                   'deliveries', string.sub(a, s3 + 1, s4 - 1), 'worker', worker,
                   'payload', payload)
        redis.call('XDEL', KEYS[mk], id)
        if hashed then redis.call('HDEL', KEYS[mk + 1], id) end
        out[#out + 1] = id
        out[#out + 1] = reason
      end
    elseif redis.pcall('XACK', KEYS[mk], group, id) == 1 then
      append(acked, mailboxes, mk, id)
      out[1] = out[1] + 1
    else
      keep = false
    end
  end
  if keep then append(batches, order, rk, record) end
end
-- The acknowledged turns leave their mailbox (and their errors) in one call per key:
-- a command per turn costs Redis more than the deletion itself.
for _, mk in ipairs(mailboxes) do
  redis.call('XDEL', KEYS[mk], unpack(acked[mk]))
  if kind(mk + 1) == 'hash' then redis.call('HDEL', KEYS[mk + 1], unpack(acked[mk])) end
end
for _, rk in ipairs(order) do
  redis.call('XADD', KEYS[rk], 'MAXLEN', '~', ARGV[2], '*',
             'r', '[' .. table.concat(batches[rk], ',') .. ']')
  redis.call('PEXPIRE', KEYS[rk], ARGV[3])
end
return out
"""

# KEYS: mailbox, errors, dead-letter stream, reply stream (or the mailbox again: unused).
# ARGV: group, message id, reply maxlen, reply ttl (ms), has reply (0/1), record (JSON),
# then the dead-letter entry's field/value pairs. Returns 1 if moved, 0 if the entry
# was already acknowledged by someone else, or the type of the dead-letter key when it
# is not a stream (nothing is done then). A reply key that is not a stream is skipped.
DEAD: Final = """
local dead = redis.call('TYPE', KEYS[3])['ok']
if dead ~= 'stream' and dead ~= 'none' then
  return dead
end
local notify = false
if ARGV[5] == '1' then
  local t = redis.call('TYPE', KEYS[4])['ok']
  notify = t == 'stream' or t == 'none'
end
local hashed = redis.call('TYPE', KEYS[2])['ok'] == 'hash'
if redis.pcall('XACK', KEYS[1], ARGV[1], ARGV[2]) ~= 1 then
  return 0
end
redis.call('XDEL', KEYS[1], ARGV[2])
if hashed then redis.call('HDEL', KEYS[2], ARGV[2]) end
redis.call('XADD', KEYS[3], '*', unpack(ARGV, 7))
if notify then
  redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[3], '*', 'r', '[' .. ARGV[6] .. ']')
  redis.call('PEXPIRE', KEYS[4], ARGV[4])
end
return 1
"""

# KEYS: the mailboxes. ARGV: group, consumer, count. ``XREADGROUP ... STREAMS <keys>
# > ...`` without blocking, its reply packed into one string: the client then parses
# one bulk reply instead of five RESP elements per entry, which in redis-py's
# pure-Python parser cost a worker more than running a no-op turn. Per stream read:
#     "<key index> <entries> " then per entry "<id> <pairs> " and its fields and
#     values as "<byte length>:<bytes> " each (pairs -1: the entry was deleted).
# Lengths make any byte safe in a field. "" when nothing is waiting.
READ: Final = """
local args = {'XREADGROUP', 'GROUP', ARGV[1], ARGV[2], 'COUNT', ARGV[3], 'STREAMS'}
local index = {}
for i = 1, #KEYS do
  args[#args + 1] = KEYS[i]
  index[KEYS[i]] = i
end
for i = 1, #KEYS do args[#args + 1] = '>' end
local found = redis.call(unpack(args))
if not found then return '' end
local parts = {}
for _, stream in ipairs(found) do
  local entries = stream[2]
  parts[#parts + 1] = index[stream[1]] .. ' ' .. #entries .. ' '
  for _, entry in ipairs(entries) do
    local fields = entry[2]
    if not fields then
      parts[#parts + 1] = entry[1] .. ' -1 '
    else
      parts[#parts + 1] = entry[1] .. ' ' .. (#fields / 2) .. ' '
      for i = 1, #fields do
        parts[#parts + 1] = #fields[i] .. ':' .. fields[i] .. ' '
      end
    end
  end
end
return table.concat(parts)
"""

# KEYS: mailbox, errors. ARGV: group, consumer, min idle (ms), cursor, count.
# Returns {next cursor, {id, fields, deliveries, last error or false}...}.
CLAIM: Final = """
local res = redis.call('XAUTOCLAIM', KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4],
                       'COUNT', ARGV[5])
local out = {res[1]}
for _, entry in ipairs(res[2]) do
  local id = entry[1]
  local p = redis.call('XPENDING', KEYS[1], ARGV[1], id, id, 1)
  local times = 1
  if p[1] then times = p[1][4] end
  out[#out + 1] = {id, entry[2], times, redis.call('HGET', KEYS[2], id)}
end
return out
"""

# KEYS: workers sorted set, mailbox. ARGV: group, consumer, heartbeat ttl (ms), then
# the ids this worker holds. Returns how many leftover consumers were removed.
# Keeping the held turns comes first, and a full Redis may refuse the heartbeat's ZADD
# without failing the rest: turns must not look idle while they run.
HEARTBEAT: Final = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[3])
if #ARGV > 3 then
  local mine = {}
  local held = redis.call('XPENDING', KEYS[2], ARGV[1], '-', '+', 10000, ARGV[2])
  for _, p in ipairs(held) do mine[p[1]] = true end
  local args = {'XCLAIM', KEYS[2], ARGV[1], ARGV[2], 0}
  for i = 4, #ARGV do
    if mine[ARGV[i]] then args[#args + 1] = ARGV[i] end
  end
  if #args > 5 then
    args[#args + 1] = 'JUSTID'  -- resets the idle time, not the delivery count
    redis.call(unpack(args))
  end
end
-- Our own member goes out and back in: memory-neutral, and a full Redis takes the
-- ZADD once the script has written (an expired member: it may refuse, harmlessly).
redis.call('ZREM', KEYS[1], ARGV[2])
redis.pcall('ZADD', KEYS[1], now + ttl, ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local removed = 0
for _, c in ipairs(redis.call('XINFO', 'CONSUMERS', KEYS[2], ARGV[1])) do
  local info = {}
  for i = 1, #c, 2 do info[c[i]] = c[i + 1] end
  if info['pending'] == 0 and info['idle'] > 2 * ttl
     and redis.call('ZSCORE', KEYS[1], info['name']) == false then
    redis.call('XGROUP', 'DELCONSUMER', KEYS[2], ARGV[1], info['name'])
    removed = removed + 1
  end
end
return removed
"""

# KEYS: mailbox. ARGV: group, consumer, idle (ms), then the ids to keep (the turns
# that started here). Every other entry this consumer holds — read ahead, never
# started — is handed back: made idle for ``idle`` ms, so that any worker takes it
# over at once, with its delivery count one less, as if it had not been delivered.
# Returns how many were handed back.
HAND_BACK: Final = """
local keep = {}
for i = 4, #ARGV do keep[ARGV[i]] = true end
local given = 0
for _, p in ipairs(redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', 10000, ARGV[2])) do
  if not keep[p[1]] then
    redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, p[1], 'IDLE', ARGV[3],
               'RETRYCOUNT', math.max(p[4] - 1, 0), 'JUSTID')
    given = given + 1
  end
end
return given
"""

# KEYS: tools set, and the agents set unless on a cluster (see PUT).
# ARGV: agent, then its tool names. Replaces the tools set
# only when it differs; its writes may be refused by a full Redis without failing the
# set-up (the set is then as the last worker left it, or missing: put() checks it only
# when it exists).
ANNOUNCE: Final = """
local same = redis.call('SCARD', KEYS[1]) == #ARGV - 1
for i = 2, #ARGV do
  if not same then break end
  same = redis.call('SISMEMBER', KEYS[1], ARGV[i]) == 1
end
if not same then
  redis.call('DEL', KEYS[1])
  if #ARGV > 1 then redis.pcall('SADD', KEYS[1], unpack(ARGV, 2)) end
end
if KEYS[2] and redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 0 then
  redis.pcall('SADD', KEYS[2], ARGV[1])
end
return 1
"""

# KEYS: mailbox. ARGV: group. Creates the consumer group (and the stream) on a full
# Redis, which refuses a plain XGROUP CREATE: the group is tiny, and without it no
# worker could drain the mailbox and free memory. Only tried after that refusal (the
# flag needs Redis 7).
FULL_GROUP: Final = """#!lua flags=allow-oom
local made = redis.pcall('XGROUP', 'CREATE', KEYS[1], ARGV[1], '0', 'MKSTREAM')
return 1
"""
