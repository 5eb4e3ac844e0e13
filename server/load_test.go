package server

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store/memory"
)

// TestLoadUpdates: loading edited state machines again updates them, and
// a type change is refused.
func TestLoadUpdates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := service.New(service.Config{Store: memory.New()})
	defer svc.Close()
	log := slog.New(slog.DiscardHandler)
	scope := arn.Scope{Region: "us-east-1", Account: "123456789012"}
	pass := func(typ, result string) []StateMachine {
		return []StateMachine{{Source: "p.yaml", Input: service.StateMachineInput{Name: "p", Type: typ, RoleARN: scope.Role("stepd-p"),
			Definition: `{"StartAt":"P","States":{"P":{"Type":"Pass","Result":"` + result + `","End":true}}}`}}}
	}
	for _, v := range []string{"one", "two", "two"} {
		if err := loadStateMachines(ctx, svc, pass("STANDARD", v), scope, log); err != nil {
			t.Fatal(err)
		}
		sm, err := svc.GetStateMachine(ctx, scope.StateMachine("p"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(sm.Definition, `"Result":"`+v+`"`) {
			t.Fatalf("after loading %s: %s", v, sm.Definition)
		}
	}
	err := loadStateMachines(ctx, svc, pass("EXPRESS", "two"), scope, log)
	if err == nil || !strings.Contains(err.Error(), "p.yaml: the state machine p exists with type STANDARD, and a type cannot change") {
		t.Fatalf("got %v", err)
	}
}
