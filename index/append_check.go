package index

import (
	"fmt"
)

// CheckAppend reports, without writing anything, whether Append would be
// refused for a reason known up front: a running database holds the LOCK of
// the file's directory (local.ErrDBLocked, unless Options.IgnoreDBLock), the
// leveldb log was closed by its writer (leveldb.ErrClosedLog) or ends before a
// recycled file's stale data (leveldb.ErrRecycledTail), or the file ends in
// bytes that are not a torn record (*TailError, unless
// Options.MoveDamagedTail), as the table last saw it. It lets a caller
// refuse at open(2) what would fail at close(2).
// A format recfs only reads gives ErrReadOnlyFormat. Append checks again.
func (t *Table) CheckAppend() error {
	if drv, err := driverFor(t.s().format); err != nil {
		return err
	} else if _, ok := drv.(appender); !ok {
		return fmt.Errorf("index: append to %s: %w", t.path, readOnlyErr(drv))
	}
	if t.localFile() == nil {
		return ErrWritableSource
	}
	if err := t.guardDBLock(); err != nil {
		return fmt.Errorf("index: append to %s: %w", t.path, err)
	}
	s := t.s()
	if c, ok := s.tab.(appendChecker); ok {
		if err := c.checkAppend(s.size); err != nil {
			return fmt.Errorf("index: append to %s: %w", t.path, err)
		}
	}
	if err := t.tailErr(s); err != nil {
		return fmt.Errorf("index: append to %s: %w", t.path, err)
	}
	return nil
}

// tailErr returns the *TailError an append to the file s describes would
// meet: nil when it ends cleanly or in a torn record, or when forced.
func (t *Table) tailErr(s *snapshot) error {
	if t.opt.MoveDamagedTail {
		return nil
	}
	off, torn, reason := s.tail()
	if rt, ok := s.tab.(*rioTable); ok {
		off, torn, reason = rt.tail(t.src(s), s)
	}
	if off < 0 || torn {
		return nil
	}
	return &TailError{Path: t.path, Off: off, Len: s.size - off, Reason: reason}
}
