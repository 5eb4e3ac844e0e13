package engine

import (
	"container/heap"
	"sync/atomic"
	"time"
)

// timerQueue is a queue of timers by due time (then id), for engines that
// carry out the interpreter's StartTimer and CancelTimer commands.
type timerQueue struct {
	h    timerHeap
	byID map[int64]*timer
	// Count, when set, is kept equal to the timers queued in every timerQueue
	// that shares it (a metric: one atomic add per timer, no lock).
	Count *atomic.Int64
}

func (t *timerQueue) count(n int64) {
	if t.Count != nil {
		t.Count.Add(n)
	}
}

// Add schedules timer id at the given time.
func (t *timerQueue) Add(id int64, at time.Time) {
	if t.byID == nil {
		t.byID = map[int64]*timer{}
	}
	tm := &timer{id: id, at: at}
	t.byID[id] = tm
	heap.Push(&t.h, tm)
	t.count(1)
}

// Remove withdraws timer id, if it is queued.
func (t *timerQueue) Remove(id int64) {
	if tm, ok := t.byID[id]; ok {
		heap.Remove(&t.h, tm.index)
		delete(t.byID, id)
		t.count(-1)
	}
}

// Clear withdraws every timer (a driver that ends or is abandoned).
func (t *timerQueue) Clear() {
	t.count(-int64(len(t.h)))
	t.h = t.h[:0]
	clear(t.byID)
}

// Len returns the number of queued timers.
func (t *timerQueue) Len() int { return len(t.h) }

// Next returns the earliest timer without removing it.
func (t *timerQueue) Next() (id int64, at time.Time, ok bool) {
	if len(t.h) == 0 {
		return 0, time.Time{}, false
	}
	return t.h[0].id, t.h[0].at, true
}

// Pop removes and returns the earliest timer.
func (t *timerQueue) Pop() (id int64, at time.Time) {
	tm := heap.Pop(&t.h).(*timer)
	delete(t.byID, tm.id)
	t.count(-1)
	return tm.id, tm.at
}

type timer struct {
	id    int64
	at    time.Time
	index int
}

type timerHeap []*timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if h[i].at.Equal(h[j].at) {
		return h[i].id < h[j].id
	}
	return h[i].at.Before(h[j].at)
}
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *timerHeap) Push(x any) {
	t := x.(*timer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	*h = old[:len(old)-1]
	return t
}
