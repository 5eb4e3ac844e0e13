package sqlite

import (
	"errors"
	"syscall"

	"github.com/stepd/stepd/store"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// unavailableError is an error of SQLite that a moment may cure: a full
// disk, an I/O error, a lock held by another process past the busy
// timeout. It is store.ErrUnavailable, so that the API answers it as a
// retryable ServiceUnavailable (HTTP 503) whose message names the cause,
// and the drivers retry their steps until it passes.
type unavailableError struct {
	cause string // what the user is told, e.g. "the disk holding the SQLite file is full"
	err   error
}

func (e *unavailableError) Error() string { return e.cause + ": " + e.err.Error() }

func (e *unavailableError) Unwrap() []error { return []error{store.ErrUnavailable, e.err} }

// unavailable returns err as store.ErrUnavailable, naming its cause, when
// it is one that passes by itself (see cause); otherwise err itself.
func unavailable(err error) error {
	if err == nil || errors.Is(err, store.ErrUnavailable) {
		return err
	}
	if c := cause(err); c != "" {
		return &unavailableError{cause: c, err: err}
	}
	return err
}

// cause names why err leaves the store unable to work for now, or is
// empty when it does not: SQLITE_FULL or ENOSPC (the disk is full),
// SQLITE_IOERR and its extended codes (the disk failed a read or a
// write), SQLITE_BUSY and SQLITE_LOCKED (returned only once the busy
// timeout has passed: another process holds the file's lock).
func cause(err error) string {
	if errors.Is(err, syscall.ENOSPC) {
		return "the disk holding the SQLite file is full"
	}
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return ""
	}
	switch e.Code() & 0xff {
	case sqlite3.SQLITE_FULL:
		return "the disk holding the SQLite file is full"
	case sqlite3.SQLITE_IOERR:
		if e.Code() == sqlite3.SQLITE_IOERR_NOMEM {
			return "SQLite is out of memory"
		}
		return "the disk holding the SQLite file failed a read or a write (I/O error)"
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return "the SQLite file is locked (by another process, past the busy timeout)"
	}
	return ""
}
