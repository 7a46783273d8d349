package interop

import (
	"bytes"
	"errors"
	"io"
	"math/rand"
	"sort"
	"testing"

	"github.com/cockroachdb/pebble/v2/record"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/leveldb"
	"github.com/recfs/recfs/test/internal/syncbuf"
)

// oldLogNum is the log number of the previous life of a recycled WAL file.
const oldLogNum = 5

// pebbleWAL writes recs with pebble's WAL writer for log number num (5 or
// pebbleLogNum). With closed it closes the log (EOF trailer); without, it
// returns only what a running database has written: every record, no
// trailer.
func pebbleWALBytes(t *testing.T, recs [][]byte, num int, closed bool) []byte {
	t.Helper()
	var buf syncbuf.Buffer
	cfg := record.LogWriterConfig{WriteWALSyncOffsets: func() bool { return false }, QueueSemChan: make(chan struct{}, 64)}
	var w *record.LogWriter
	switch num {
	case oldLogNum:
		w = record.NewLogWriter(&buf, oldLogNum, cfg)
	case pebbleLogNum:
		w = record.NewLogWriter(&buf, pebbleLogNum, cfg)
	default:
		t.Fatalf("log number %d", num)
	}
	for i, r := range recs {
		if _, err := w.WriteRecord(r); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	n := w.Size()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if !closed {
		b = b[:n]
	}
	return b
}

// readPebbleToEnd reads records with pebble v2's reader for pebbleLogNum
// until its end of log: io.EOF, or an invalid or zeroed chunk, which pebble's
// own WAL recovery also takes as the end of the log.
func readPebbleToEnd(b []byte) ([][]byte, error) {
	recs, err := readPebble(b)
	if err == nil || errors.Is(err, record.ErrInvalidChunk) || errors.Is(err, record.ErrZeroedChunk) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, record.ErrUnexpectedEOF) {
		return recs, nil
	}
	return recs, err
}

// TestPebbleRecycledWAL builds the WAL of a running pebble database that
// reused the file of an older, longer WAL (pebble recycles WAL files by
// default): pebble's writer writes the live log over the old file's bytes,
// from offset 0, and has not closed it. The file thus ends in the old log's
// bytes. recfs must return exactly what pebble's reader returns and report
// the rest as one stale tail, not as damage; a torn last record of the live
// log stays a truncation.
func TestPebbleRecycledWAL(t *testing.T) {
	checked := 0
	for i, seed := range testSeeds(t, 12) {
		rng := rand.New(rand.NewSource(seed))
		// Large old logs, and small ones that end in the live log's block.
		oldSize, bigOK := int64(400<<10), true
		if i%3 == 2 {
			oldSize, bigOK = 12<<10+rng.Int63n(18<<10), false
		}
		old := makeRecords(rng, leveldbSizeMix(rng, oldSize, bigOK))
		oldFile := pebbleWALBytes(t, old, oldLogNum, true)
		liveRecs := makeRecords(rng, leveldbSizeMix(rng, int64(len(oldFile))/2, bigOK))
		live := pebbleWALBytes(t, liveRecs, pebbleLogNum, false)
		if len(live) >= len(oldFile) {
			// The live log drew a record bigger than the old log's (seed
			// 1795755458973383887: all twelve did): keep the longest prefix
			// of its records that still ends inside the old file.
			k := sort.Search(len(liveRecs), func(k int) bool {
				return len(pebbleWALBytes(t, liveRecs[:k+1], pebbleLogNum, false)) >= len(oldFile)
			})
			if k == 0 {
				continue
			}
			liveRecs = liveRecs[:k]
			live = pebbleWALBytes(t, liveRecs, pebbleLogNum, false)
		}
		checked++
		for _, torn := range []bool{false, true} {
			l := live
			if torn {
				l = l[:len(l)-1-rng.Intn(min(len(l)-1, 200))]
			}
			file := bytes.Clone(oldFile)
			copy(file, l)

			want, err := readPebbleToEnd(file)
			if err != nil {
				t.Fatalf("seed %d: pebble: %v", seed, err)
			}
			if !torn && len(want) != len(liveRecs) {
				t.Fatalf("seed %d: pebble reads %d records of %d", seed, len(want), len(liveRecs))
			}
			// The live log's number, as recfs takes it from the file's
			// name (000007.log) and pebble's reader is given it: a write
			// torn inside the live log's first chunk header (seed
			// 1795777963360255314) leaves bytes that alone say log 5.
			got := recfsReadLogWith(file, nil, leveldb.Options{LogNum: pebbleLogNum})
			if got.Err != nil {
				t.Fatalf("seed %d: %v", seed, got.Err)
			}
			if d := diffRecords(want, got.Recs); d != "" {
				t.Errorf("seed %d torn=%v: recfs vs pebble: %s", seed, torn, d)
			}
			n := len(got.Damage)
			// Fewer bytes than a chunk header left after the live log prove
			// nothing (seed 1795415359853089012: the 5 last bytes of the old
			// log's end marker): a truncated header is as true as stale. So
			// is a 7-byte legacy header whose checksum fails there (seed
			// 1795830138769440777): too short for a recyclable chunk of
			// either log, it cannot show which log it was.
			if !torn && n > 0 {
				d := got.Damage[n-1]
				if d.Len < 11 && d.Off+d.Len == int64(len(file)) &&
					(errors.Is(d, codec.ErrTruncated) || d.Kind == codec.DamageChecksum && d.Off >= int64(len(l))) {
					continue
				}
			}
			// Nor do zeros short of a header there (seed
			// 1795780901239554807: one zero byte of the old log after the
			// live log's last block): they are the block's padding.
			if !torn && n == 0 && len(file)-len(l) < 11 && codec.AllZero(file[len(l):]) {
				continue
			}
			// A write torn inside the live log's last chunk leaves that
			// chunk's header over the old log's bytes, so its checksum
			// fails; when no intact chunk of the old log follows (seed
			// 1795830488590201653: the 85 bytes from a block start to the
			// file's end), nothing proves the rest stale. pebble ends the
			// log there too (the records compared equal above), and the
			// record that chunk ends is cut short.
			tornOverOld := torn && n > 0 && got.Damage[n-1].Kind == codec.DamageChecksum && got.Damage[n-1].Off < int64(len(l))
			if n == 0 || !errors.Is(got.Damage[n-1], codec.ErrStale) && !tornOverOld || got.Damage[n-1].Off+got.Damage[n-1].Len != int64(len(file)) {
				t.Fatalf("seed %d torn=%v: damage %v, want a stale tail to the end of the %d-byte file", seed, torn, got.Damage, len(file))
			}
			for _, d := range got.Damage[:n-1] {
				// (The torn record itself, when its last chunk is the one
				// torn over the old log, is cut short.)
				if !torn || !errors.Is(d, codec.ErrTruncated) && !(tornOverOld && d.Kind == codec.DamageCutShort) {
					t.Errorf("seed %d torn=%v: damage %v besides the stale tail", seed, torn, d)
				}
			}
			if st := got.Damage[n-1].Off; st < int64(len(l))-int64(len(l))%32768 && !torn {
				t.Errorf("seed %d: stale tail from %d, but the live log runs to %d", seed, st, len(l))
			}
		}
	}
	if checked == 0 {
		t.Fatal("no live log was shorter than the old one")
	}
}
