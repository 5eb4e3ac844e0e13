package service

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"sync"
	"time"

	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// callback is a SendTask* request routed to an execution's runner.
type callback struct {
	token string
	in    interp.Input // ID filled in by the runner
	reply chan error
}

// activity is a registered activity and its queue of waiting tasks.
type activity struct {
	arn, name string
	created   time.Time
	queue     chan activityTask
}

type activityTask struct {
	token  string
	input  string
	runner *runner
}

var activityNameRE = regexp.MustCompile(`^[0-9A-Za-z_-]{1,80}$`)

func (s *Service) activities() map[string]*activity {
	s.actOnce.Do(func() { s.acts = map[string]*activity{} })
	return s.acts
}

// CreateActivity registers an activity; creating an existing one returns it.
func (s *Service) CreateActivity(ctx context.Context, name string) (string, time.Time, error) {
	if !activityNameRE.MatchString(name) {
		return "", time.Time{}, errorf("InvalidName", "Invalid Name: '%s'", name)
	}
	arn := fmt.Sprintf("arn:aws:states:%s:%s:activity:%s", s.cfg.Region, s.cfg.Account, name)
	s.mu.Lock()
	defer s.mu.Unlock()
	acts := s.activities()
	if a, ok := acts[arn]; ok {
		return a.arn, a.created, nil
	}
	a := &activity{arn: arn, name: name, created: s.clock.Now(), queue: make(chan activityTask, 1024)}
	acts[arn] = a
	return arn, a.created, nil
}

func (s *Service) activity(arn string) (*activity, error) {
	if err := checkARN(arn, "activity"); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.activities()[arn]
	if a == nil {
		return nil, errorf("ActivityDoesNotExist", "Activity Does Not Exist: '%s'", arn)
	}
	return a, nil
}

// DescribeActivity returns an activity's name and creation date.
func (s *Service) DescribeActivity(ctx context.Context, arn string) (string, time.Time, error) {
	a, err := s.activity(arn)
	if err != nil {
		return "", time.Time{}, err
	}
	return a.name, a.created, nil
}

// DeleteActivity removes an activity.
func (s *Service) DeleteActivity(ctx context.Context, arn string) error {
	if err := checkARN(arn, "activity"); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.activities(), arn)
	return nil
}

// ActivityInfo describes an activity in a list.
type ActivityInfo struct {
	ARN, Name string
	Created   time.Time
}

// ListActivities lists activities by name.
func (s *Service) ListActivities(ctx context.Context, page store.Page) ([]ActivityInfo, string, error) {
	s.mu.Lock()
	var all []ActivityInfo
	for _, a := range s.activities() {
		all = append(all, ActivityInfo{ARN: a.arn, Name: a.name, Created: a.created})
	}
	s.mu.Unlock()
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	off := 0
	if page.Token != "" {
		if _, err := fmt.Sscanf(page.Token, "%d", &off); err != nil || off < 0 || off > len(all) {
			return nil, "", errorf("InvalidToken", "Invalid Token: '%s'", page.Token)
		}
	}
	limit := page.Limit
	if limit <= 0 {
		limit = 100
	}
	end := min(off+limit, len(all))
	next := ""
	if end < len(all) {
		next = fmt.Sprint(end)
	}
	return all[off:end], next, nil
}

// GetActivityTask waits up to wait (AWS: 60 seconds) for a task of the
// activity. It returns an empty token when none came.
func (s *Service) GetActivityTask(ctx context.Context, arn, worker string, wait time.Duration) (token, input string, err error) {
	a, err := s.activity(arn)
	if err != nil {
		return "", "", err
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case at := <-a.queue:
			// The task may have been cancelled or timed out meanwhile.
			if at.runner.deliver(callback{token: at.token, in: interp.Input{Kind: interp.TaskStarted, Worker: worker}}) != nil {
				continue
			}
			return at.token, at.input, nil
		case <-t.C:
			return "", "", nil
		case <-ctx.Done():
			return "", "", nil
		}
	}
}

// SendTaskSuccess completes the task of token with output (JSON text).
func (s *Service) SendTaskSuccess(ctx context.Context, token, output string) error {
	v, err := value.ParseString(output)
	if err != nil {
		return errorf("InvalidOutput", "Invalid Output: '%v'", err)
	}
	if len(output) > maxPayload {
		return errorf("InvalidOutput", "Invalid Output: the output exceeds the maximum size of 262144 bytes")
	}
	return s.callback(ctx, token, interp.Input{Kind: interp.TaskDone, Result: task.Result{Output: v}})
}

// SendTaskFailure fails the task of token.
func (s *Service) SendTaskFailure(ctx context.Context, token, errName, cause string) error {
	if errName == "" {
		errName = "States.TaskFailed"
	}
	return s.callback(ctx, token, interp.Input{Kind: interp.TaskDone, Result: task.Result{Error: errName, Cause: cause}})
}

// SendTaskHeartbeat records a heartbeat for the task of token.
func (s *Service) SendTaskHeartbeat(ctx context.Context, token string) error {
	return s.callback(ctx, token, interp.Input{Kind: interp.TaskHeartbeat})
}

func (s *Service) callback(ctx context.Context, token string, in interp.Input) error {
	arn, ok := interp.TokenExecution(token)
	if !ok {
		return errorf("InvalidToken", "Invalid Token: 'Invalid token'")
	}
	s.mu.Lock()
	r := s.running[arn]
	s.mu.Unlock()
	if r == nil {
		return errorf("TaskDoesNotExist", "Task Does Not Exist: the execution of this token is not running")
	}
	return r.deliver(callback{token: token, in: in})
}

// deliver hands a callback to the runner and waits for its verdict.
func (r *runner) deliver(cb callback) error {
	cb.reply = make(chan error, 1)
	select {
	case r.callbacks <- cb:
	case <-r.done:
		return errorf("TaskDoesNotExist", "Task Does Not Exist: the execution has ended")
	}
	select {
	case err := <-cb.reply:
		return err
	case <-r.done:
		return errorf("TaskDoesNotExist", "Task Does Not Exist: the execution has ended")
	}
}

// tokens tracks the operations waiting for task tokens in a runner.
type tokens struct {
	mu   sync.Mutex
	byTk map[string]int64
}

func (t *tokens) add(token string, id int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byTk == nil {
		t.byTk = map[string]int64{}
	}
	t.byTk[token] = id
}

func (t *tokens) get(token string) (int64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	id, ok := t.byTk[token]
	return id, ok
}

func (t *tokens) remove(id int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, v := range t.byTk {
		if v == id {
			delete(t.byTk, k)
		}
	}
}
