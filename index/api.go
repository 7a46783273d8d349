package index

import (
	"errors"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/kafka"
	"github.com/recfs/recfs/codec/recordio"
)

// ErrRange is returned for a record number outside [0, Len()).
var ErrRange = errors.New("index: record number out of range")

// Options configure Open, OpenSource and Build. The zero value detects the format,
// skips damage, caches tables under the user's cache directory and uses
// every CPU.
type Options struct {
	Format          codec.Format            // Unknown: detect from the bytes
	Strict          bool                    // refuse damaged files instead of skipping damage
	Unmasked        bool                    // leveldb logs with unmasked CRCs (legacy writers)
	LegacyTransform string                  // legacy recordio transform ("flate"); "" infers it from a .grail-rpk-gz name
	LogNum          uint32                  // a leveldb log's number (low 32 bits) from its NNNNNN.log name, 0 = unknown; see leveldb.Options.LogNum
	CacheDir        string                  // where saved tables live; "" = <user cache dir>/recfs; "-" = no saved tables
	Parallel        int                     // scanner goroutines for a build; 0 = GOMAXPROCS
	Progress        func(done, total int64) // called during a build with bytes scanned so far
	Writable        bool                    // the caller will Append: open read-write and repair what a crashed append left (through a descriptor that can write; else the first append repairs)
	Rebuild         bool                    // ignore a saved table: build afresh (and save the new one)
	// IgnoreDBLock lets Append (and the repairs of a Writable open) change
	// a file whose directory holds a database LOCK file that a running
	// database has locked (recfs --force). By default that is refused with
	// local.ErrDBLocked.
	IgnoreDBLock bool
	// MoveDamagedTail lets Append (and the repairs of a Writable open)
	// move bytes after the last record that are not a torn record out of
	// the file as it moves a torn one, saved aside first, instead of
	// refusing with a *TailError (recfs --force).
	MoveDamagedTail bool
	// DeferCreateSync lets Create leave a new file that it wrote nothing
	// into (a leveldb log, a TFRecord file) to the fsync of the caller's
	// next Append with AppendOptions.Sync or Sync, which must follow: one
	// fsync instead of two for recfs append --create --sync. A crash before
	// that fsync leaves no file or an empty one. Files with a header are
	// synced at Create all the same. The new file's directory entry is
	// synced with it: at Create, or after the first synced append or Sync
	// (once, not on every append).
	DeferCreateSync bool
	// KeepCreateLock makes Create and CreateSource keep the new file's
	// append lock for the table's first append, which then neither takes
	// the lock nor probes the database LOCK again (Create probed it): one
	// lock and one probe for a file created to be appended to at once, as
	// recfs append --create does. The lock is released when that append
	// returns or the table is closed; other appenders wait until then.
	KeepCreateLock bool
	// TailMoved, when set, is told of every tail an append or a Writable
	// open moved out of the file (where its bytes went); when nil, each
	// is logged.
	TailMoved func(MovedTail)
}

// InferOptions returns o with what a source's name tells filled in where
// o leaves it open: a ".grail-rpk-gz" name is legacy recordio whose packed
// data is raw-DEFLATE compressed (LegacyTransform "flate"); a WAL's name,
// NNNNNN.log (pebble, RocksDB) or NNNNNN-NNN.log (a segment of a pebble
// WAL with failover), gives the log's number (LogNum). Open applies it to
// a path; callers that open sources otherwise (objects, URLs: the query is
// not part of the name) apply it to their name.
func InferOptions(name string, o Options) Options {
	if o.LegacyTransform == "" && strings.HasSuffix(name, ".grail-rpk-gz") {
		o.LegacyTransform = "flate"
	}
	if o.LogNum == 0 {
		if strings.Contains(name, "://") {
			name, _, _ = strings.Cut(name, "?")
			name, _, _ = strings.Cut(name, "#")
		}
		o.LogNum = logNumber(name[strings.LastIndexByte(name, '/')+1:])
	}
	return o
}

// logNumber returns the low 32 bits of the number a log file's name
// NNNNNN.log or NNNNNN-NNN.log gives, or 0 (also for a Kafka segment's
// name, whose 20 digits are an offset).
func logNumber(base string) uint32 {
	digits, ok := strings.CutSuffix(base, ".log")
	if !ok || kafka.IsSegmentName(base) {
		return 0
	}
	if d, seg, ok := strings.Cut(digits, "-"); ok {
		if _, err := strconv.ParseUint(seg, 10, 64); err != nil {
			return 0
		}
		digits = d
	}
	if digits == "" {
		return 0
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return 0
	}
	return uint32(n)
}

// HeaderEntry is one key/value of a recordio header (recordio.HeaderEntry):
// Value is a bool, int64, uint64 or string.
type HeaderEntry = recordio.HeaderEntry

// Info summarises a table for `recfs info` and the mount's .recfs file.
type Info struct {
	Path      string        // source path ("" for Build)
	Format    codec.Format  // detected or given format
	Flavor    string        // e.g. "leveldb", "App Engine (padded)", "pebble WAL (recyclable, log 7)", "recordio (zstd)"
	FileSize  int64         // bytes of the source covered by the table
	Records   int64         // records (items) in the table
	Bytes     int64         // total payload bytes
	Loaded    string        // how the table was made: "built" (scanned) or "cached" (a saved table loaded)
	BuildTime time.Duration // time spent building or loading
	Trailer   int64         // trailer size in bytes, or -1 if none
	CacheFile string        // the saved index loaded or written for this table ("" if none)
	Facts     []Fact        // what the format says about the file beyond records (Kafka: batches, offsets, ...), in order
}

// Fact is one thing a format says about a file, for info and .recfs: a
// name of lower-case words ("first offset") and an int64, a string or a
// []int64.
type Fact struct {
	Name  string
	Value any
}

// FormatDuration formats the time an index took to build or load, the same
// way everywhere (.recfs, info, index): rounded to the microsecond.
func FormatDuration(d time.Duration) string { return d.Round(time.Microsecond).String() }

// Compile-time check that a record can be served as an io.ReaderAt.
var _ io.ReaderAt = (*Record)(nil)

// Record is a record of a table seen as an io.ReaderAt of its payload.
type Record struct {
	t *Table
	n int64
}

// ReadAt reads bytes of the record's payload; it implements io.ReaderAt.
func (r *Record) ReadAt(p []byte, off int64) (int, error) { return r.t.ReadAt(r.n, p, off) }

// Size returns the record's payload length.
func (r *Record) Size() int64 { return r.t.Size(r.n) }

// Open returns the record n as an io.ReaderAt, or ErrRange.
func (t *Table) Open(n int64) (*Record, error) {
	if n < 0 || n >= t.Len() {
		return nil, ErrRange
	}
	return &Record{t: t, n: n}, nil
}
