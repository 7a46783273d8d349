package index

import (
	"context"
	"errors"
	"os"

	"github.com/sirupsen/logrus"
)

// OpenFile is Open for a file the caller has opened already (read-only):
// the table reads f and keeps it, so the path is never resolved again for
// reading; path names the file in messages and saved tables. Refreshes
// look at the path again through o.Reopen when it is set (callers that
// resolve paths safely set it), with os.Open and os.Stat otherwise. On
// failure f is left open for the caller to close.
func OpenFile(ctx context.Context, f *os.File, path string, o Options) (*Table, error) {
	t, err := openFile(ctx, f, path, o)
	if err != nil {
		return nil, err
	}
	if o.Writable {
		// A leveldb log left torn by a crashed writer is repaired before
		// anyone appends to it (recordio files were repaired in openFile),
		// as a scan of it says, not a saved table.
		if off, _, _ := t.s().tail(); off >= 0 {
			t.mu.Lock()
			err := t.scannedLocked(ctx)
			t.mu.Unlock()
			if err != nil {
				return nil, err
			}
		}
		fixed, err := t.repairLogTail()
		switch {
		case errors.Is(err, ErrNoPrivateDir):
			// The file stays as it is; an append will say why it cannot.
			logrus.Warnf("recfs: %s has a torn tail that stays in place: %v", path, err)
		case err != nil:
			return nil, err
		case fixed:
			if _, err := t.Refresh(ctx); err != nil {
				return nil, err
			}
		}
	}
	return t, nil
}

// statPath returns the attributes of the file now at the table's path,
// through Options.Reopen when it is set.
func (t *Table) statPath() (os.FileInfo, error) {
	if t.opt.Reopen == nil {
		return os.Stat(t.path)
	}
	f, err := t.opt.Reopen()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Stat()
}

// Stat returns the attributes of the file the table reads now (the one it
// was opened on, or the one a refresh reopened), whatever is at its path.
func (t *Table) Stat() (os.FileInfo, error) {
	if !t.opened {
		return nil, errNoFile
	}
	return t.curFile().Stat()
}

// curFile returns the file the table reads now, for callers that do not
// hold t.mu (a refresh may switch it under them).
func (t *Table) curFile() *os.File {
	t.rioMu.Lock()
	defer t.rioMu.Unlock()
	return t.file
}
