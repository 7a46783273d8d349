package interop

// The one place that calls recfs's recordio appender API.

import (
	"github.com/recfs/recfs/codec/recordio"
)

// rioAppender is the part of recfs's appender the crash child uses.
type rioAppender interface {
	Append(items ...[]byte) error
	Close() error
}

// openRioAppender opens path for crash-safe appends, maxItems+1 items per block.
func openRioAppender(path string, maxItems int) (rioAppender, error) {
	return recordio.OpenAppender(path, recordio.AppendOptions{MaxItems: maxItems})
}

// repairRio runs recfs's recovery on a file whose appender was killed.
func repairRio(path string) (bool, error) { return recordio.Repair(path) }
