package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/stepd/stepd/execlog"
	"github.com/stepd/stepd/notify"
	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/task/registry"
)

// eventSetup is what the execution logs, status-change events and
// retention of a Config set up, started once the service exists.
type eventSetup struct {
	logs       *execlog.Destination
	dispatcher *notify.Dispatcher
	retention  time.Duration
}

// setupEvents configures cfg from c and the registry file's Events.
func setupEvents(cfg *service.Config, st store.Store, c Config, stdout io.Writer, log *slog.Logger) (*eventSetup, error) {
	x := eventSetup{retention: c.Retention}
	var err error
	if c.LogGroups != "" {
		if x.logs, err = execlog.ToDir(c.LogGroups); err != nil {
			return nil, fmt.Errorf("--log-groups: %w", err)
		}
	} else {
		x.logs = execlog.ToWriter(stdout)
	}
	cfg.ExecutionLogs = x.logs
	var targets []notify.Target
	for _, u := range c.Webhooks {
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			return nil, fmt.Errorf("--events-webhook: want an http:// or https:// URL, got %q", u)
		}
		targets = append(targets, &notify.Webhook{URL: u})
	}
	if cmd := strings.TrimSpace(c.EventsCommand); cmd != "" {
		targets = append(targets, &notify.Command{Argv: []string{"/bin/sh", "-c", cmd}})
	}
	if c.ConfigFile != "" {
		rc, err := registry.ReadConfig(c.ConfigFile)
		if err != nil {
			return nil, fmt.Errorf("--config: %w", err)
		}
		for i, t := range rc.Events {
			switch {
			case t.Url != "" && len(t.Command) == 0:
				targets = append(targets, &notify.Webhook{URL: t.Url})
			case t.Url == "" && len(t.Command) > 0:
				targets = append(targets, &notify.Command{Argv: t.Command, Env: t.Env})
			default:
				return nil, fmt.Errorf("--config %s: Events[%d]: want exactly one of Url and Command", c.ConfigFile, i)
			}
		}
	}
	if len(targets) > 0 {
		ns, ok := st.(notify.Store)
		if !ok {
			return nil, fmt.Errorf("events: the store keeps no outbox")
		}
		x.dispatcher = &notify.Dispatcher{Store: ns, Targets: targets, Region: cfg.Region, Account: cfg.Account, Log: log}
		cfg.StatusEvents = x.dispatcher.Kick
	}
	return &x, nil
}

// start runs the dispatcher and the retention loop until ctx ends.
func (x *eventSetup) start(ctx context.Context, svc *service.Service) {
	if x.dispatcher != nil {
		go x.dispatcher.Run(ctx)
	}
	if x.retention > 0 {
		go svc.Retain(ctx, x.retention, retentionEvery(x.retention))
	}
}

// retentionEvery is how often retention runs: hourly, or more often for a
// short retention.
func retentionEvery(keep time.Duration) time.Duration {
	return min(time.Hour, max(keep/10, time.Second))
}
