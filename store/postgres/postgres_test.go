package postgres_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/postgres"
	"github.com/stepd/stepd/store/postgres/pgtest"
	"github.com/stepd/stepd/store/storetest"
)

func open(tb testing.TB, dsn string) *postgres.Store {
	tb.Helper()
	s, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

func TestSuite(t *testing.T) {
	pgtest.Server(t)
	storetest.Run(t, func(t *testing.T) store.Store { return open(t, pgtest.DSN(t)) })
}

func TestDurable(t *testing.T) {
	pgtest.Server(t)
	var mu sync.Mutex
	dsns := map[string]string{} // a directory of the suite → its schema
	storetest.RunDurable(t, func(t *testing.T, dir string) store.Store {
		mu.Lock()
		defer mu.Unlock()
		if dsns[dir] == "" {
			dsns[dir] = pgtest.DSN(t)
		}
		return open(t, dsns[dir])
	})
}
