package server

import (
	"context"

	"github.com/stepd/stepd/api"
	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/scheduler"
	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/task/registry"
)

// startScheduler starts firing the store's schedules (on the service's
// clock, so the time scale applies) and returns the Scheduler API and a
// function that stops the firing.
func startScheduler(ctx context.Context, st store.Store, svc *service.Service, reg *registry.Invoker, cfg service.Config, h *api.Handler) (*api.SchedulerAPI, func()) {
	scope := arn.Scope{Region: cfg.Region, Account: cfg.Account}.Or()
	sc := scheduler.Config{Store: st, Service: svc, Clock: cfg.Clock, Region: scope.Region, Account: scope.Account, Log: cfg.Log}
	if reg != nil {
		sc.Invoker = reg
	}
	sch := scheduler.New(sc)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sch.Run(ctx)
	}()
	return api.NewSchedulerAPI(h, sch), func() {
		cancel()
		<-done
	}
}
