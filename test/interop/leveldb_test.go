package interop

import (
	"bytes"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
)

// leveldbMixes builds the randomized record sets of one test run: one per
// seed, the first with a multi-MiB record.
func leveldbMixes(t *testing.T) (seeds []int64, sets [][][]byte) {
	seeds = testSeeds(t, 4)
	for i, s := range seeds {
		rng := rand.New(rand.NewSource(s))
		sizes := leveldbSizeMix(rng, 1_000_000, i == 0)
		sets = append(sets, makeRecords(rng, sizes))
	}
	return seeds, sets
}

// TestLeveldbRecfsWritesReferenceReads: logs written by recfs's LogWriter
// are byte-identical to goleveldb's and pebble's record.Writer output, and
// goleveldb's journal.Reader and pebble v2's record.Reader return exactly the
// records, with no drops.
func TestLeveldbRecfsWritesReferenceReads(t *testing.T) {
	seeds, sets := leveldbMixes(t)
	for i, recs := range sets {
		seed := seeds[i]
		got, gl := mustRecfsLog(t, recs, false), mustGoleveldb(t, recs)
		pb, err := writePebbleWriter(recs)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, gl) {
			t.Errorf("seed %d: recfs output (%d bytes) differs from goleveldb's (%d bytes) at byte %d",
				seed, len(got), len(gl), firstDiff(got, gl))
		}
		if !bytes.Equal(got, pb) {
			t.Errorf("seed %d: recfs output differs from pebble record.Writer's at byte %d", seed, firstDiff(got, pb))
		}
		checkReferenceReadsLog(t, seed, "recfs", got, recs)
	}
}

// checkReferenceReadsLog reads a legacy log with goleveldb and pebble and
// wants exactly recs, with no drop reports.
func checkReferenceReadsLog(t *testing.T, seed int64, what string, b []byte, recs [][]byte) {
	t.Helper()
	gr, drops, err := readGoleveldb(b)
	if err != nil || len(drops) > 0 {
		t.Errorf("seed %d: goleveldb reading %s log: err %v, drops %q", seed, what, err, drops)
	}
	if d := diffRecords(recs, gr); d != "" {
		t.Errorf("seed %d: goleveldb reading %s log: %s", seed, what, d)
	}
	pr, err := readPebble(b)
	if err != nil {
		t.Errorf("seed %d: pebble reading %s log: %v", seed, what, err)
	}
	if d := diffRecords(recs, pr); d != "" {
		t.Errorf("seed %d: pebble reading %s log: %s", seed, what, d)
	}
}

// TestLeveldbAppEngineMode: with AppEngine set, recfs's output is goleveldb's
// plus zero padding to the block end (spec 4.1), and recfs reads it back
// with the padding noticed, not reported as damage.
func TestLeveldbAppEngineMode(t *testing.T) {
	seeds, sets := leveldbMixes(t)
	sets = append(sets, nil, [][]byte{payload(0, logBlock-logHeader)}) // empty log: no padding; block-exact: none
	seeds = append(seeds, 0, 0)
	for i, recs := range sets {
		seed := seeds[i]
		got, want := mustRecfsLog(t, recs, true), mustGoleveldb(t, recs)
		if r := len(want) % logBlock; r != 0 {
			want = append(want, make([]byte, logBlock-r)...)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("seed %d (%d records): App Engine output (%d bytes) differs from goleveldb+padding (%d bytes) at byte %d",
				seed, len(recs), len(got), len(want), firstDiff(got, want))
			continue
		}
		rd := recfsReadLog(got, nil)
		if rd.Err != nil || len(rd.Damage) > 0 {
			t.Errorf("seed %d: recfs reading App Engine log: err %v, damage %v", seed, rd.Err, rd.Damage)
		}
		if d := diffRecords(recs, rd.Recs); d != "" {
			t.Errorf("seed %d: recfs reading App Engine log: %s", seed, d)
		}
		// goleveldb may report the padding as a drop but must return every record.
		gr, _, err := readGoleveldb(got)
		if err != nil {
			t.Errorf("seed %d: goleveldb on App Engine log: %v", seed, err)
		}
		if d := diffRecords(recs, gr); d != "" {
			t.Errorf("seed %d: goleveldb on App Engine log: %s", seed, d)
		}
	}
}

// TestLeveldbReferenceWritesRecfsReads: logs written by goleveldb, pebble's
// record.Writer and pebble's WAL LogWriter (recyclable and WAL-sync chunks,
// EOF trailer) are read by recfs's scanner and ReadLogRecord with exactly
// the records and no damage.
func TestLeveldbReferenceWritesRecfsReads(t *testing.T) {
	seeds, sets := leveldbMixes(t)
	writers := []struct {
		name  string
		write func([][]byte) ([]byte, error)
		flav  func(t *testing.T, rd recfsLogRead)
	}{
		{"goleveldb journal.Writer", writeGoleveldb, nil},
		{"pebble record.Writer", writePebbleWriter, nil},
		{"pebble LogWriter recyclable", func(r [][]byte) ([]byte, error) { return writePebbleLogWriter(r, false) },
			func(t *testing.T, rd recfsLogRead) {
				if !rd.Info.Recyclable || rd.Info.LogNum != pebbleLogNum || rd.Info.EOFMarker < 0 {
					t.Errorf("info %+v: want recyclable, log number %d, EOF marker found", rd.Info, pebbleLogNum)
				}
			}},
		{"pebble LogWriter WAL-sync", func(r [][]byte) ([]byte, error) { return writePebbleLogWriter(r, true) },
			func(t *testing.T, rd recfsLogRead) {
				if !rd.Info.WALSync || rd.Info.LogNum != pebbleLogNum || rd.Info.EOFMarker < 0 {
					t.Errorf("info %+v: want WAL-sync, log number %d, EOF marker found", rd.Info, pebbleLogNum)
				}
			}},
	}
	for _, w := range writers {
		t.Run(w.name, func(t *testing.T) {
			for i, recs := range sets {
				b, err := w.write(recs)
				if err != nil {
					t.Fatal(err)
				}
				rd := recfsReadLog(b, rand.New(rand.NewSource(seeds[i])))
				if rd.Err != nil || len(rd.Damage) > 0 {
					t.Errorf("seed %d: err %v, damage %v", seeds[i], rd.Err, rd.Damage)
				}
				if d := diffRecords(recs, rd.Recs); d != "" {
					t.Errorf("seed %d: %s", seeds[i], d)
				}
				if w.flav != nil {
					w.flav(t, rd)
				}
				// Sanity of the reference pair itself.
				pr, err := readPebble(b)
				if d := diffRecords(recs, pr); err != nil || d != "" {
					t.Errorf("seed %d: pebble cannot read its own file back: %v %s", seeds[i], err, d)
				}
			}
		})
	}
}

// TestLeveldbAppendSessions: a log written by recfs in two sessions (the
// second opened with O_APPEND and Offset = file size) is byte-identical to a
// single goleveldb session and is read back by goleveldb and pebble.
func TestLeveldbAppendSessions(t *testing.T) {
	seeds, sets := leveldbMixes(t)
	dir := t.TempDir()
	for i, recs := range sets {
		seed := seeds[i]
		rng := rand.New(rand.NewSource(seed))
		cut := rng.Intn(len(recs) + 1)
		path := filepath.Join(dir, "append.log")
		os.Remove(path)
		for s, part := range [][][]byte{recs[:cut], recs[cut:]} {
			f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			st, err := f.Stat()
			if err != nil {
				t.Fatal(err)
			}
			if s == 0 && st.Size() != 0 {
				t.Fatal("stale file")
			}
			if err := recfsWriteLog(f, part, st.Size(), false, nil); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if want := mustGoleveldb(t, recs); !bytes.Equal(got, want) {
			t.Errorf("seed %d (cut after %d of %d): two-session log differs from one goleveldb session at byte %d",
				seed, cut, len(recs), firstDiff(got, want))
		}
		checkReferenceReadsLog(t, seed, "two-session recfs", got, recs)
	}
}

// firstDiff returns the index of the first differing byte of a and b.
func firstDiff(a, b []byte) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
