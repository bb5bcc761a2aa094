-- tables.lua N: table churn for bench/workloads.sh, run by lua5.4, whose
-- allocator is realloc and free (lauxlib's l_alloc): every table, array
-- part, hash part and string is a realloc, every collection a free.
--
-- Each of N steps makes a record (a table with a string key, a nested
-- array, a hash part that grows) into a map of about 50,000 slots, which
-- replaces the slot's old record; one step in seven clears another slot,
-- and every 1,000 steps a list of 200 strings is joined.  The collector
-- frees what was replaced.  Prints a checksum.
local n = tonumber(arg[1])
local live = {}
local total = 0
for i = 1, n do
  local k = (i * 7919) % 50021
  local t = {id = i, name = "k" .. k .. "-" .. (i % 13), vals = {i, i * 2, i * 3}}
  for j = 1, i % 5 do t["f" .. j] = j end
  live[k] = t
  if i % 7 == 0 then live[(i * 31) % 50021] = nil end
  total = total + #t.name + #t.vals
  if i % 1000 == 0 then
    local s = {}
    for j = 1, 200 do s[j] = tostring(i + j) end
    total = total + #table.concat(s, ",")
  end
end
local count = 0
for _, _ in pairs(live) do count = count + 1 end
print("checksum", total, count)
