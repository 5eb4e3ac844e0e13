package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stepd/stepd/store"
)

// RunShared checks the contract of a store.Shared. cluster returns, for
// one test, node (which opens a new node of one shared store) and expire
// (which makes a node's lease lapse at once, as if it had stopped renewing
// it).
func RunShared(t *testing.T, cluster func(t *testing.T) (node func() store.Shared, expire func(store.Shared))) {
	t.Run("Fencing", func(t *testing.T) { fencing(t, cluster) })
	t.Run("ClaimOnce", func(t *testing.T) { claimOnce(t, cluster) })
	t.Run("LeaveOnClose", func(t *testing.T) { leaveOnClose(t, cluster) })
	t.Run("Messages", func(t *testing.T) { messages(t, cluster) })
	t.Run("ActivityTasks", func(t *testing.T) { activityTasks(t, cluster) })
	t.Run("HeldTasks", func(t *testing.T) { heldTasks(t, cluster) })
	t.Run("Ask", func(t *testing.T) { ask(t, cluster) })
	t.Run("Offered", func(t *testing.T) { offered(t, cluster) })
}

// ask: a node asking the owner of an execution gets the reply its
// receiver gave, also when the owner failed the message once first; a
// question for an execution that is not running is refused, and one that
// ends unanswered (ctx) leaves the message queued.
func ask(t *testing.T, cluster func(t *testing.T) (func() store.Shared, func(store.Shared))) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	node, _ := cluster(t)
	a, b := node(), node()
	defer a.Close()
	defer b.Close()
	x := exec("q", "x", 0)
	if err := a.CreateExecution(ctx, x, step(x.ARN, 0, 1, 1, "RUNNING")); err != nil {
		t.Fatal(err)
	}
	var ra, rb receiver
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() { _ = a.Receive(ctx, ra.fn) })
	wg.Go(func() { _ = b.Receive(ctx, rb.fn) })
	for _, msg := range []string{"1", "fail once", "2"} {
		asked, cancelAsk := context.WithTimeout(ctx, 30*time.Second)
		reply, err := b.Ask(asked, x.ARN, []byte(msg))
		cancelAsk()
		if err != nil || string(reply) != "re "+msg {
			t.Fatalf("ask %q: %q %v, want %q", msg, reply, err, "re "+msg)
		}
	}
	ra.wait(t, "x/1 x/fail once x/2")
	if _, err := b.Ask(ctx, exec("q", "none", 1).ARN, []byte("3")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("asking about an execution that does not exist: %v, want ErrNotFound", err)
	}
}

// offered: a taker waiting on one node is woken by a task offered on
// another (while that node receives), and finds it.
func offered(t *testing.T, cluster func(t *testing.T) (func() store.Shared, func(store.Shared))) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	node, _ := cluster(t)
	a, b := node(), node()
	defer a.Close()
	defer b.Close()
	var rb receiver
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() { _ = b.Receive(ctx, rb.fn) })
	act := "arn:aws:states:us-east-1:1:activity:wake"
	woken := b.Offered(act)
	other := b.Offered(act + "-other")
	// Until b listens, an offer may go unheard: offer until b hears one.
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; ; i++ {
		task := &store.ActivityTask{ActivityARN: act, ExecutionARN: "x", Token: fmt.Sprintf("w%d", i), Input: "{}"}
		if err := a.OfferTask(ctx, task); err != nil {
			t.Fatal(err)
		}
		select {
		case <-woken:
		case <-time.After(200 * time.Millisecond):
			if time.Now().After(deadline) {
				t.Fatal("an offer on another node did not wake the taker")
			}
			continue
		}
		break
	}
	if got, err := b.TakeTask(ctx, act); err != nil || got == nil || got.Token != "w0" {
		t.Fatalf("the task that woke the taker: %+v %v", got, err)
	}
	select {
	case <-other:
		t.Error("an offer for one activity woke the takers of another")
	default:
	}
}

// activityTasks: tasks offered on one node are taken from any, oldest
// first, each once (also by many takers at once); offering a queued token
// again adds nothing.
func activityTasks(t *testing.T, cluster func(t *testing.T) (func() store.Shared, func(store.Shared))) {
	ctx := context.Background()
	node, _ := cluster(t)
	a, b := node(), node()
	defer a.Close()
	defer b.Close()
	act := "arn:aws:states:us-east-1:1:activity:w"
	const n = 40
	for i := range n {
		task := &store.ActivityTask{ActivityARN: act, ExecutionARN: fmt.Sprintf("x%d", i), Token: fmt.Sprintf("t%d", i), Input: fmt.Sprintf(`{"i":%d}`, i)}
		if err := a.OfferTask(ctx, task); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if err := b.OfferTask(ctx, task); err != nil {
				t.Fatal(err)
			}
		}
	}
	if other, err := b.TakeTask(ctx, act+"-other"); err != nil || other != nil {
		t.Fatalf("a task of another activity: %+v %v", other, err)
	}
	first, err := b.TakeTask(ctx, act)
	if err != nil || first == nil || first.Token != "t0" || first.ExecutionARN != "x0" || first.Input != `{"i":0}` {
		t.Fatalf("the oldest task: %+v %v", first, err)
	}
	var mu sync.Mutex
	taken := map[string]int{}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			s := []store.Shared{a, b}[i%2]
			for {
				task, err := s.TakeTask(ctx, act)
				if err != nil {
					t.Error(err)
					return
				}
				if task == nil {
					return
				}
				mu.Lock()
				taken[task.Token]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(taken) != n-1 {
		t.Errorf("%d tasks taken, want %d", len(taken), n-1)
	}
	for tok, c := range taken {
		if c != 1 || tok == "t0" {
			t.Errorf("task %s taken %d times", tok, c)
		}
	}
}

// heldTasks: a task taken is held by its taker, which drops it or
// releases it for the others; one held by a node whose lease lapsed (a
// node that died while it handed the task out) is taken again.
func heldTasks(t *testing.T, cluster func(t *testing.T) (func() store.Shared, func(store.Shared))) {
	ctx := context.Background()
	node, expire := cluster(t)
	a, b := node(), node()
	defer a.Close()
	defer b.Close()
	act := "arn:aws:states:us-east-1:1:activity:held"
	for i := range 3 {
		if err := a.OfferTask(ctx, &store.ActivityTask{ActivityARN: act, ExecutionARN: fmt.Sprintf("x%d", i), Token: fmt.Sprintf("h%d", i), Input: "{}"}); err != nil {
			t.Fatal(err)
		}
	}
	take := func(s store.Shared, want string) {
		t.Helper()
		got, err := s.TakeTask(ctx, act)
		switch {
		case err != nil:
			t.Fatal(err)
		case want == "" && got != nil:
			t.Fatalf("took %s, want none", got.Token)
		case want != "" && (got == nil || got.Token != want):
			t.Fatalf("took %+v, want %s", got, want)
		}
	}
	take(a, "h0")
	take(b, "h1")
	take(b, "h2")
	take(a, "") // all three are held
	// Offering a held token again adds nothing.
	if err := b.OfferTask(ctx, &store.ActivityTask{ActivityARN: act, ExecutionARN: "x1", Token: "h1", Input: "{}"}); err != nil {
		t.Fatal(err)
	}
	take(a, "")
	// Only the holder drops or releases a task.
	if err := a.DropTask(ctx, "h1"); err != nil {
		t.Fatal(err)
	}
	if err := a.ReleaseTask(ctx, "h2"); err != nil {
		t.Fatal(err)
	}
	take(a, "")
	if err := b.ReleaseTask(ctx, "h1"); err != nil {
		t.Fatal(err)
	}
	if err := b.DropTask(ctx, "h2"); err != nil {
		t.Fatal(err)
	}
	take(a, "h1") // released by b
	take(b, "")   // h0 and h1 are a's, h2 is gone
	if err := a.DropTask(ctx, "h1"); err != nil {
		t.Fatal(err)
	}
	// a dies holding h0: once its lease has lapsed, b takes h0.
	expire(a)
	take(b, "h0")
	if err := b.DropTask(ctx, "h0"); err != nil {
		t.Fatal(err)
	}
	take(b, "")
}

// receiver collects the messages a node receives, failing the first
// delivery of a message whose text is "fail once".
type receiver struct {
	mu     sync.Mutex
	got    []string
	failed bool
}

func (r *receiver) fn(_ context.Context, arn string, msg []byte) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if string(msg) == "fail once" && !r.failed {
		r.failed = true
		return nil, errors.New("not now")
	}
	r.got = append(r.got, arn[strings.LastIndex(arn, ":")+1:]+"/"+string(msg))
	return []byte("re " + string(msg)), nil
}

func (r *receiver) wait(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		// In the order sent for each execution; executions interleave.
		r.mu.Lock()
		list := slices.Clone(r.got)
		r.mu.Unlock()
		slices.SortStableFunc(list, func(a, b string) int {
			return strings.Compare(a[:strings.Index(a, "/")], b[:strings.Index(b, "/")])
		})
		got := strings.Join(list, " ")
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("received %q, want %q", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// messages: a message sent from any node reaches the owner of its
// execution, in the order sent, once; one that fails is offered again;
// one sent while the owner is dead reaches the node that claims the
// execution; a message for an execution that is not running is refused.
func messages(t *testing.T, cluster func(t *testing.T) (func() store.Shared, func(store.Shared))) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	node, expire := cluster(t)
	a, b := node(), node()
	defer a.Close()
	defer b.Close()
	x, y := exec("m", "x", 0), exec("m", "y", 1)
	for _, e := range []*store.Execution{x, y} {
		if err := a.CreateExecution(ctx, e, step(e.ARN, 0, 1, 1, "RUNNING")); err != nil {
			t.Fatal(err)
		}
	}
	var ra, rb receiver
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() { _ = a.Receive(ctx, ra.fn) })
	wg.Go(func() { _ = b.Receive(ctx, rb.fn) })
	for _, m := range []struct {
		from store.Shared
		e    *store.Execution
		msg  string
	}{{b, x, "1"}, {a, x, "2"}, {b, y, "fail once"}, {b, x, "3"}} {
		if err := m.from.Send(ctx, m.e.ARN, []byte(m.msg)); err != nil {
			t.Fatal(err)
		}
	}
	ra.wait(t, "x/1 x/2 x/3 y/fail once")
	if err := a.AppendStep(ctx, step(y.ARN, 1, 2, 1, "SUCCEEDED")); err != nil {
		t.Fatal(err)
	}
	if err := b.Send(ctx, y.ARN, []byte("late")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a message to an ended execution: %v, want ErrNotFound", err)
	}
	expire(a)
	if err := a.Send(ctx, x.ARN, []byte("4")); err != nil {
		t.Fatal(err)
	}
	if claimed, err := b.Claim(ctx); err != nil || len(claimed) != 1 {
		t.Fatalf("claim: %v %v", names(claimed), err)
	}
	rb.wait(t, "x/4")
	ra.wait(t, "x/1 x/2 x/3 y/fail once")
}

// fencing: once a node's lease has lapsed and another has claimed its
// execution, the first can commit no step of it, and learns it lost its
// lease; the second goes on from the last step the first committed.
func fencing(t *testing.T, cluster func(t *testing.T) (func() store.Shared, func(store.Shared))) {
	ctx := context.Background()
	node, expire := cluster(t)
	a, b := node(), node()
	defer a.Close()
	defer b.Close()
	e := exec("f", "x", 0)
	if err := a.CreateExecution(ctx, e, step(e.ARN, 0, 1, 1, "RUNNING")); err != nil {
		t.Fatal(err)
	}
	if err := a.AppendStep(ctx, step(e.ARN, 1, 2, 1, "RUNNING")); err != nil {
		t.Fatal(err)
	}
	if claimed, err := b.Claim(ctx); err != nil || len(claimed) != 0 {
		t.Fatalf("claim while the owner's lease holds: %v %v, want nothing", names(claimed), err)
	}
	expire(a)
	claimed, err := b.Claim(ctx)
	if err != nil || len(claimed) != 1 || claimed[0].ARN != e.ARN {
		t.Fatalf("claim after the owner's lease lapsed: %v %v, want [x]", names(claimed), err)
	}
	if err := a.AppendStep(ctx, step(e.ARN, 2, 3, 1, "RUNNING")); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a step from the node that lost its lease: %v, want ErrConflict", err)
	}
	select {
	case <-a.Lost():
	case <-time.After(10 * time.Second):
		t.Fatal("the node that lost its lease was not told")
	}
	if err := b.AppendStep(ctx, step(e.ARN, 2, 3, 1, "SUCCEEDED")); err != nil {
		t.Fatalf("the new owner's step: %v", err)
	}
	steps, err := b.Steps(ctx, e.ARN)
	if err != nil || len(steps) != 3 || steps[2].Status != "SUCCEEDED" {
		t.Fatalf("steps: %d %v", len(steps), err)
	}
	if again, err := b.Claim(ctx); err != nil || len(again) != 0 {
		t.Errorf("a second claim: %v %v, want nothing", names(again), err)
	}
}

// claimOnce: several nodes claiming at once the executions of a node whose
// lease lapsed take each exactly once.
func claimOnce(t *testing.T, cluster func(t *testing.T) (func() store.Shared, func(store.Shared))) {
	ctx := context.Background()
	node, expire := cluster(t)
	dead := node()
	defer dead.Close()
	const n = 50
	for i := range n {
		e := exec("c", fmt.Sprintf("x%d", i), i)
		if err := dead.CreateExecution(ctx, e, step(e.ARN, 0, 1, 1, "RUNNING")); err != nil {
			t.Fatal(err)
		}
	}
	others := []store.Shared{node(), node(), node()}
	for _, o := range others {
		defer o.Close()
	}
	expire(dead)
	got := make([][]*store.Execution, len(others))
	errs := make([]error, len(others))
	var wg sync.WaitGroup
	for i, o := range others {
		wg.Go(func() { got[i], errs[i] = o.Claim(ctx) })
	}
	wg.Wait()
	seen := map[string]int{}
	for i := range others {
		if errs[i] != nil {
			t.Fatalf("node %d: %v", i, errs[i])
		}
		for _, e := range got[i] {
			seen[e.Name]++
		}
	}
	for i := range n {
		if c := seen[fmt.Sprintf("x%d", i)]; c != 1 {
			t.Errorf("execution x%d claimed %d times, want once", i, c)
		}
	}
}

// leaveOnClose: a node that closes hands its running executions over at
// once, without their lease lapsing; ended executions are not claimed.
func leaveOnClose(t *testing.T, cluster func(t *testing.T) (func() store.Shared, func(store.Shared))) {
	ctx := context.Background()
	node, _ := cluster(t)
	a, b := node(), node()
	defer b.Close()
	run, done := exec("l", "run", 0), exec("l", "done", 1)
	for _, e := range []*store.Execution{run, done} {
		if err := a.CreateExecution(ctx, e, step(e.ARN, 0, 1, 1, "RUNNING")); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.AppendStep(ctx, step(done.ARN, 1, 2, 1, "SUCCEEDED")); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	claimed, err := b.Claim(ctx)
	if err != nil || len(claimed) != 1 || claimed[0].ARN != run.ARN {
		t.Fatalf("claim after the owner closed: %v %v, want [run]", names(claimed), err)
	}
}
