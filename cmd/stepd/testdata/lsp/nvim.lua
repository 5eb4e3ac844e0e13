-- Drives stepd lsp from Neovim's own LSP client (nvim --headless): opens
-- a broken definition and reads the diagnostics, completes a Next and
-- renames a state. Each step waits for its condition (vim.wait), not for
-- a time; the results go to $LSP_RESULT as JSON, and the exit code says
-- whether every step got what it waited for.
local result = { steps = {} }

local function finish(code)
  local f = assert(io.open(os.getenv('LSP_RESULT'), 'w'))
  f:write(vim.fn.json_encode(result))
  f:close()
  vim.cmd('cquit ' .. code)
end

local function step(name, ok, detail)
  table.insert(result.steps, { name = name, ok = ok, detail = detail or '' })
  if not ok then finish(1) end
end

-- a guard against a hang only: each wait ends as soon as its condition holds
local guard = 60000

vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('LSP_FILE')))
local buf = vim.api.nvim_get_current_buf()
local id = vim.lsp.start_client({
  name = 'stepd',
  cmd = { os.getenv('STEPD_BIN'), 'lsp' },
  root_dir = vim.fn.fnamemodify(os.getenv('LSP_FILE'), ':h'),
})
step('start', id ~= nil)
vim.lsp.buf_attach_client(buf, id)

-- 1. diagnostics of the broken definition
local got = vim.wait(guard, function() return #vim.diagnostic.get(buf) > 0 end, 10)
local diags = vim.diagnostic.get(buf)
result.diagnostics = {}
for _, d in ipairs(diags) do
  table.insert(result.diagnostics, { lnum = d.lnum, col = d.col, end_col = d.end_col, message = d.message })
end
step('diagnostics', got)

-- 2. complete the Next on line 7 ("Next": "Se|")
local client = vim.lsp.get_client_by_id(id)
local line = vim.api.nvim_buf_get_lines(buf, 6, 7, false)[1]
local col = line:find('"Se"', 1, true) + 2 -- after "Se, 0-based
local answers = vim.lsp.buf_request_sync(buf, 'textDocument/completion', {
  textDocument = { uri = vim.uri_from_bufnr(buf) },
  position = { line = 6, character = col },
}, guard)
local items = answers and answers[id] and answers[id].result or {}
if items.items then items = items.items end
result.completion = {}
local chosen
for _, it in ipairs(items) do
  table.insert(result.completion, it.label)
  if it.label == 'Second' then chosen = it end
end
step('completion offers Second', chosen ~= nil, vim.inspect(result.completion))
vim.lsp.util.apply_text_edits({ chosen.textEdit }, buf, client.offset_encoding or 'utf-16')
result.completed = vim.api.nvim_buf_get_lines(buf, 6, 7, false)[1]
step('completion applied', result.completed:find('"Next": "Second"', 1, true) ~= nil, result.completed)

-- the server sees the change: the diagnostics of the new text come back
vim.lsp.buf_request_sync(buf, 'textDocument/hover', {
  textDocument = { uri = vim.uri_from_bufnr(buf) }, position = { line = 6, character = 16 } }, guard)

-- 3. rename the state Second (its key on line 9) to Final
vim.api.nvim_win_set_cursor(0, { 9, 6 })
vim.lsp.buf.rename('Final')
local renamed = vim.wait(guard, function()
  local text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
  return text:find('"Final": {', 1, true) ~= nil and text:find('"Next": "Final"', 1, true) ~= nil
end, 10)
result.text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
step('rename', renamed, result.text)

finish(0)
