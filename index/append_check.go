package index

import (
	"fmt"

	"github.com/recfs/recfs/codec"
)

// CheckAppend reports, without writing anything, whether Append would be
// refused for a reason known up front: a running database holds the LOCK of
// the file's directory (ErrDBLocked, unless Options.IgnoreDBLock), or the
// leveldb log was closed by its writer (codec.ErrClosedLog) or ends before a
// recycled file's stale data (codec.ErrRecycledTail), as the table last
// saw it. It lets a caller refuse at open(2) what would fail at close(2);
// Append checks again.
func (t *Table) CheckAppend() error {
	if !t.opened {
		return errNoFile
	}
	if err := t.guardDBLock(); err != nil {
		return fmt.Errorf("index: append to %s: %w", t.path, err)
	}
	if s := t.s(); s.format == codec.LevelDB {
		if err := s.log.info.CheckAppend(s.size); err != nil {
			return fmt.Errorf("index: append to %s: %w", t.path, err)
		}
	}
	return nil
}
