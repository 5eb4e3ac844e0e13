package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/stepd/stepd/internal/uuid"
	"github.com/stepd/stepd/scheduler"
	"github.com/stepd/stepd/service"
)

// SchedulerAPI serves the EventBridge Scheduler API (rest-json, SigV4
// service "scheduler") on the same listener as the Step Functions API:
// the schedules of the default group.
type SchedulerAPI struct {
	h   *Handler // its Auth, AllowHosts and Observe apply
	sch *scheduler.Scheduler
}

// NewSchedulerAPI returns the Scheduler API of sch, authenticated and
// observed as h is.
func NewSchedulerAPI(h *Handler, sch *scheduler.Scheduler) *SchedulerAPI {
	return &SchedulerAPI{h: h, sch: sch}
}

// IsSchedulerPath reports whether a request's path is the Scheduler
// API's (the Step Functions API takes POST / only).
func IsSchedulerPath(path string) bool {
	for _, p := range []string{"/schedules", "/schedule-groups", "/tags/"} {
		if path == p || strings.HasPrefix(path, p+"/") || p == "/tags/" && strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}

// WithScheduler routes the Scheduler API's paths to s and every other
// request to next.
func WithScheduler(next http.Handler, s *SchedulerAPI) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if IsSchedulerPath(r.URL.Path) {
			s.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ServeHTTP implements http.Handler.
func (s *SchedulerAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t0 := time.Now()
	op, code := s.serve(w, r)
	s.h.requests.Add(1)
	if s.h.Observe != nil {
		s.h.Observe(op, code, time.Since(t0))
	}
}

// route names the operation of a request and the schedule it names.
func route(method, path string) (op, name string) {
	rest, isSchedule := strings.CutPrefix(path, "/schedules/")
	switch {
	case path == "/schedules" && method == http.MethodGet:
		return "ListSchedules", ""
	case isSchedule && rest != "" && !strings.Contains(rest, "/"):
		name, _ = url.PathUnescape(rest)
		switch method {
		case http.MethodPost:
			return "CreateSchedule", name
		case http.MethodGet:
			return "GetSchedule", name
		case http.MethodPut:
			return "UpdateSchedule", name
		case http.MethodDelete:
			return "DeleteSchedule", name
		}
	case path == "/schedule-groups" && method == http.MethodGet:
		return "ListScheduleGroups", ""
	case strings.HasPrefix(path, "/schedule-groups/"):
		switch method {
		case http.MethodPost:
			return "CreateScheduleGroup", ""
		case http.MethodGet:
			return "GetScheduleGroup", ""
		case http.MethodDelete:
			return "DeleteScheduleGroup", ""
		}
	case strings.HasPrefix(path, "/tags/"):
		switch method {
		case http.MethodPost:
			return "TagResource", ""
		case http.MethodGet:
			return "ListTagsForResource", ""
		case http.MethodDelete:
			return "UntagResource", ""
		}
	}
	return "", ""
}

func (s *SchedulerAPI) serve(w http.ResponseWriter, r *http.Request) (op, code string) {
	op, name := route(r.Method, r.URL.Path)
	if op == "" {
		return "unknown", schedError(w, &scheduler.Error{Status: 404, Code: "UnknownOperationException", Message: fmt.Sprintf("no Scheduler operation is %s %s", r.Method, r.URL.Path)})
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return op, schedError(w, &scheduler.Error{Status: 400, Code: "SerializationException", Message: err.Error()})
	}
	if len(body) > maxBody {
		return op, schedError(w, &scheduler.Error{Status: 413, Code: "ValidationException", Message: "request body too large"})
	}
	if a := s.h.Auth; a != nil && len(a.Keys) > 0 {
		if err := a.verifyService(r, body, "scheduler"); err != nil {
			return op, schedError(w, err)
		}
	} else if !hostAllowed(r.Host, s.h.AllowHosts) {
		return op, schedError(w, hostError(r.Host))
	}
	if !utf8.Valid(body) {
		return op, schedError(w, &scheduler.Error{Status: 400, Code: "SerializationException",
			Message: fmt.Sprintf("the request body is not UTF-8: a byte outside UTF-8 at offset %d", badOffset(body))})
	}
	out, err := s.call(r.Context(), op, name, r.URL.Query(), body)
	if err != nil {
		return op, schedError(w, err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("x-amzn-RequestId", uuid.New())
	b, _ := json.Marshal(out)
	_, _ = w.Write(b)
	return op, "OK"
}

func (s *SchedulerAPI) call(ctx context.Context, op, name string, q url.Values, body []byte) (any, error) {
	switch op {
	case "CreateSchedule", "UpdateSchedule":
		var sc scheduler.Schedule
		if len(body) == 0 {
			body = []byte("{}")
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields() // a field stepd does not know is refused by name
		if err := dec.Decode(&sc); err != nil {
			return nil, &scheduler.Error{Status: 400, Code: "ValidationException", Message: err.Error()}
		}
		if err := trailing(body, dec.InputOffset()); err != nil {
			return nil, err
		}
		if sc.Arn != "" || sc.CreationDate != nil || sc.LastModificationDate != nil {
			return nil, &scheduler.Error{Status: 400, Code: "ValidationException", Message: "Arn, CreationDate and LastModificationDate are not request fields"}
		}
		sc.Name = name
		var arn string
		var err error
		if op == "CreateSchedule" {
			arn, err = s.sch.Create(ctx, sc)
		} else {
			arn, err = s.sch.Update(ctx, sc)
		}
		if err != nil {
			return nil, err
		}
		return map[string]string{"ScheduleArn": arn}, nil
	case "GetSchedule":
		return s.sch.Get(ctx, q.Get("groupName"), name)
	case "DeleteSchedule":
		return struct{}{}, s.sch.Delete(ctx, q.Get("groupName"), name)
	case "ListSchedules":
		p := service.Page{Token: q.Get("NextToken")}
		if m := q.Get("MaxResults"); m != "" {
			n, err := strconv.Atoi(m)
			if err != nil || n < 1 {
				return nil, &scheduler.Error{Status: 400, Code: "ValidationException", Message: fmt.Sprintf("1 validation error detected: Value '%s' at 'maxResults' failed to satisfy constraint: Member must have value between 1 and 100", m)}
			}
			p.Limit = n
		}
		list, next, err := s.sch.List(ctx, q.Get("ScheduleGroup"), q.Get("NamePrefix"), q.Get("State"), p)
		if err != nil {
			return nil, err
		}
		out := map[string]any{"Schedules": list}
		if next != "" {
			out["NextToken"] = next
		}
		return out, nil
	}
	return nil, &scheduler.Error{Status: 400, Code: "ValidationException", Message: fmt.Sprintf("stepd does not implement %s: it keeps the schedules of the group %q, without tags", op, scheduler.DefaultGroup)}
}

// schedError answers err in the rest-json shape and returns its code.
func schedError(w http.ResponseWriter, err error) string {
	var se *scheduler.Error
	var ae *apiError
	switch {
	case errors.As(err, &se):
	case errors.As(err, &ae):
		se = &scheduler.Error{Status: ae.status, Code: ae.code, Message: ae.message}
	default:
		se = &scheduler.Error{Status: 500, Code: "InternalServerException", Message: err.Error()}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("x-amzn-RequestId", uuid.New())
	w.Header().Set("X-Amzn-Errortype", se.Code)
	w.WriteHeader(se.Status)
	b, _ := json.Marshal(map[string]string{"Message": clipMessage(se.Message)})
	_, _ = w.Write(b)
	return se.Code
}
