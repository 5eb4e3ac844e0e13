// Reading only the new part of a running execution's history.

// readSince returns the events after the event with id lastId, oldest
// first. page(token) answers one GetExecutionHistory page read newest first
// (reverseOrder); pages are read until one reaches lastId, so a poll of a
// long history costs one small request. It returns null when the events do
// not follow on from lastId (ids must be contiguous): the caller then reads
// the whole history again.
export async function readSince(page, lastId) {
  const newer = [];
  let token;
  for (;;) {
    const r = await page(token);
    for (const e of r.events || []) {
      if (e.id <= lastId) return follows(newer.reverse(), lastId);
      newer.push(e);
    }
    token = r.nextToken;
    if (!token) return follows(newer.reverse(), lastId);
  }
}

function follows(events, lastId) {
  for (let i = 0; i < events.length; i++) {
    if (events[i].id !== lastId + 1 + i) return null;
  }
  return events;
}
