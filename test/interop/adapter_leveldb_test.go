package interop

// The one place that calls recfs's leveldb codec API, so a rename costs one
// edit.

import (
	"bytes"
	"fmt"
	"io"
	"math/rand"
	"testing"

	"github.com/recfs/recfs/codec/leveldb"

	"github.com/recfs/recfs/codec"
)

// recfsWriteLog writes recs to w with recfs's LogWriter, starting at log
// offset off (append mode when > 0), App Engine padding when appEngine.
// sync, if not nil, runs after each record is flushed (for the crash child).
func recfsWriteLog(w io.Writer, recs [][]byte, off int64, appEngine bool, sync func(i int) error) error {
	lw := leveldb.NewWriter(w, leveldb.WriterOptions{Offset: off, AppEngine: appEngine})
	for i, r := range recs {
		if _, err := lw.WriteRecord(r); err != nil {
			return fmt.Errorf("recfs WriteRecord %d: %w", i, err)
		}
		if sync != nil {
			if err := lw.Flush(); err != nil {
				return err
			}
			if err := sync(i); err != nil {
				return err
			}
		}
	}
	return lw.Close()
}

// recfsLogWriter returns recfs's LogWriter appending to w at log offset off.
func recfsLogWriter(w io.Writer, off int64) *leveldb.Writer {
	return leveldb.NewWriter(w, leveldb.WriterOptions{Offset: off})
}

// recfsLogBytes is recfsWriteLog into memory, from offset 0.
func recfsLogBytes(recs [][]byte, appEngine bool) ([]byte, error) {
	var buf bytes.Buffer
	err := recfsWriteLog(&buf, recs, 0, appEngine, nil)
	return buf.Bytes(), err
}

// mustRecfsLog is recfsLogBytes, failing t on an error.
func mustRecfsLog(t testing.TB, recs [][]byte, appEngine bool) []byte {
	t.Helper()
	b, err := recfsLogBytes(recs, appEngine)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// recfsLogRead is what recfs's scanner found in a leveldb log.
type recfsLogRead struct {
	Recs   [][]byte
	Locs   []leveldb.Record
	Damage []codec.Damage
	Info   leveldb.Info
	Err    error
}

// recfsReadLog scans b with recfs's LogScanner and reads every record back
// through ReadLogRecord: whole, and (when rng is set) also in two random
// pieces, which must agree.
func recfsReadLog(b []byte, rng *rand.Rand) recfsLogRead {
	return recfsReadLogWith(b, rng, leveldb.Options{})
}

// recfsReadLogWith is recfsReadLog with scan options (a log number from the
// file's name).
func recfsReadLogWith(b []byte, rng *rand.Rand, o leveldb.Options) recfsLogRead {
	ra := bytes.NewReader(b)
	sc := leveldb.NewScanner(ra, int64(len(b)), o)
	var out recfsLogRead
	for sc.Next() {
		loc := sc.Record()
		p := make([]byte, loc.Len)
		n, err := leveldb.ReadRecord(ra, loc, p, 0, leveldb.Options{})
		if err != nil && !(err == io.EOF && int64(n) == loc.Len) {
			out.Err = fmt.Errorf("ReadLogRecord of record %d at %d (%d bytes): n=%d: %w", len(out.Recs), loc.Off, loc.Len, n, err)
			break
		}
		if rng != nil && loc.Len > 1 {
			cut := rng.Int63n(loc.Len)
			q := make([]byte, loc.Len)
			n1, err1 := leveldb.ReadRecord(ra, loc, q[:cut], 0, leveldb.Options{})
			n2, err2 := leveldb.ReadRecord(ra, loc, q[cut:], cut, leveldb.Options{})
			if err1 != nil || (err2 != nil && err2 != io.EOF) || int64(n1+n2) != loc.Len || !bytes.Equal(p, q) {
				out.Err = fmt.Errorf("record %d at %d: split read at %d disagrees with whole read (n %d+%d, %v, %v)",
					len(out.Recs), loc.Off, cut, n1, n2, err1, err2)
				break
			}
		}
		out.Recs = append(out.Recs, p)
		out.Locs = append(out.Locs, loc)
	}
	if out.Err == nil {
		out.Err = sc.Err()
	}
	out.Damage = sc.Damage()
	out.Info = sc.Info()
	return out
}
