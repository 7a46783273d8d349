package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/recfs/recfs/codec/codectest/recfile"

	"github.com/recfs/recfs/codec/recordio"
)

// sameSizeRecords returns records with the lengths of recs and other bytes,
// so that a file of them has the layout and the size of a file of recs.
func sameSizeRecords(recs [][]byte, tag byte) [][]byte {
	out := make([][]byte, len(recs))
	for i, r := range recs {
		b := bytes.Repeat([]byte{tag + byte(i%26)}, len(r))
		copy(b, fmt.Sprintf("%c-%d-", tag, i))
		out[i] = b
	}
	return out
}

// writeSource writes recs to path as a source of format: "log" (a
// leveldb log), "rio" (recordio, 9 items a block) or "rio-zstd" (the
// same, zstd-compressed).
func writeSource(t *testing.T, path, format string, recs [][]byte) {
	t.Helper()
	switch format {
	case "log":
		recfile.WriteLog(t, path, recs)
	case "rio":
		recfile.WriteRIO(t, path, recs, recordio.WriterOptions{MaxItems: 9})
	case "rio-zstd":
		recfile.WriteRIO(t, path, recs, recordio.WriterOptions{MaxItems: 9, Transformers: []string{"zstd"}})
	default:
		t.Fatalf("writeSource: no format %q", format)
	}
}

// encodeSource returns the bytes of a source of format (see writeSource)
// holding recs.
func encodeSource(t *testing.T, format string, recs [][]byte) []byte {
	t.Helper()
	p := filepath.Join(t.TempDir(), "enc")
	writeSource(t, p, format, recs)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTableSourceChanged changes a source under an open table in the ways
// a user or a program might. Until Refresh, every read of an old record
// must fail with ErrChanged or return that record's own bytes (a pure
// append or a rename leave them in place): never bytes of another version
// or of no version. After Refresh the table serves the new records, and
// its generation moved unless the change was a pure append.
func TestTableSourceChanged(t *testing.T) {
	old := hostileRecords(40, 'a')
	same := sameSizeRecords(old, 'A')
	other := hostileRecords(33, 'k')[3:]
	more := append(append([][]byte(nil), old...), hostileRecords(7, 'q')...)
	cases := []struct {
		name     string
		change   func(t *testing.T, format, path string) [][]byte // returns the records after
		oldReads bool                                             // old records still readable before Refresh
		newGen   bool
	}{
		{"overwrite same size, mtime restored", func(t *testing.T, format, path string) [][]byte {
			fi, _ := os.Stat(path)
			b := encodeSource(t, format, same)
			if int64(len(b)) != fi.Size() {
				t.Fatalf("same-size records make %d bytes, not %d", len(b), fi.Size())
			}
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteAt(b, 0)
			f.Close()
			os.Chtimes(path, fi.ModTime(), fi.ModTime())
			return same
		}, false, true},
		{"truncate and rewrite", func(t *testing.T, format, path string) [][]byte {
			writeSource(t, path, format, other)
			return other
		}, false, true},
		{"rewrite larger", func(t *testing.T, format, path string) [][]byte {
			recs := append(append([][]byte(nil), same...), other...)
			writeSource(t, path, format, recs)
			return recs
		}, false, true},
		{"truncate", func(t *testing.T, format, path string) [][]byte {
			fi, _ := os.Stat(path)
			if err := os.Truncate(path, fi.Size()/2); err != nil {
				t.Fatal(err)
			}
			return nil // whatever a rebuild finds
		}, false, true},
		{"append", func(t *testing.T, format, path string) [][]byte {
			if format != "log" {
				// A recordio append through the codec's appender.
				a, err := OpenRecordIOAppender(path, RecordIOAppendOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if err := a.Append(more[len(old):]...); err != nil {
					t.Fatal(err)
				}
				if err := a.Close(); err != nil {
					t.Fatal(err)
				}
				return more
			}
			recfile.AppendLog(t, path, more[len(old):]...)
			return more
		}, true, false},
		{"replace by rename", func(t *testing.T, format, path string) [][]byte {
			tmp := path + ".new"
			writeSource(t, tmp, format, same)
			if err := os.Rename(tmp, path); err != nil {
				t.Fatal(err)
			}
			return same
		}, true, true},
	}
	for _, format := range []string{"log", "rio", "rio-zstd"} {
		for _, c := range cases {
			t.Run(format+"/"+c.name, func(t *testing.T) {
				tb, path := openTemp(t, encodeSource(t, format, old), Options{CacheDir: "-"})
				for n := range old {
					readRecord(t, tb, int64(n)) // warm every cache
				}
				gen := tb.Generation()
				time.Sleep(2 * time.Millisecond)
				after := c.change(t, format, path)
				for n, want := range old {
					got := make([]byte, len(want))
					k, err := tb.ReadAt(int64(n), got, 0)
					switch {
					case err == nil && bytes.Equal(got[:k], want) && c.oldReads:
					case err == nil:
						t.Fatalf("record %d before refresh: %d bytes %q..., want ErrChanged", n, k, got[:min(k, 12)])
					case !errors.Is(err, ErrChanged):
						t.Fatalf("record %d before refresh: %v, want ErrChanged", n, err)
					case c.oldReads:
						t.Fatalf("record %d before refresh: %v, want its bytes", n, err)
					}
				}
				if _, err := tb.Refresh(context.Background()); err != nil {
					t.Fatal(err)
				}
				if moved := tb.Generation() != gen; moved != c.newGen {
					t.Errorf("generation moved %v, want %v", moved, c.newGen)
				}
				if after != nil && tb.Len() != int64(len(after)) {
					t.Fatalf("%d records after refresh, want %d", tb.Len(), len(after))
				}
				for n := range tb.Len() {
					got := readRecord(t, tb, n)
					if after != nil && !bytes.Equal(got, after[n]) {
						t.Fatalf("record %d after refresh: %q..., want %q...", n, got[:min(len(got), 12)], after[n][:12])
					}
				}
				if c.newGen && tb.Len() > 0 {
					if _, err := tb.ReadAtGeneration(gen, 0, make([]byte, 4), 0); !errors.Is(err, ErrChanged) {
						t.Errorf("read at the old generation: %v, want ErrChanged", err)
					}
				}
			})
		}
	}
}

// TestFollowSlowRewrite rewrites a followed source in place piece by piece
// (same layout, other bytes) while readers read it: every read returns a
// whole record of one version or fails with ErrChanged, and once the
// rewrite is over the table serves the new version. Following must not
// publish a table of the half-written file, whose records would be half of
// each version with every chunk checksum valid.
func TestFollowSlowRewrite(t *testing.T) {
	for _, format := range []string{"log", "rio-zstd"} {
		t.Run(format, func(t *testing.T) {
			old := hostileRecords(60, 'a')
			next := sameSizeRecords(old, 'A')
			tb, path := openTemp(t, encodeSource(t, format, old), Options{CacheDir: "-"})
			defer follow(tb)()
			bad := make(chan string, 1)
			stop := untilStopped(2, func(r, i int) bool {
				n := int64((i*7 + r) % len(old))
				got := make([]byte, len(old[n]))
				k, err := tb.ReadAt(n, got, 0)
				if err != nil || k != len(got) || bytes.Equal(got, old[n]) || bytes.Equal(got, next[n]) {
					return true
				}
				select {
				case bad <- fmt.Sprintf("record %d: %q", n, got[:min(len(got), 40)]):
				default:
				}
				return true
			})
			defer stop() // when the test fails before it stops them
			b := encodeSource(t, format, next)
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			for off := 0; off < len(b); off += 1024 {
				f.WriteAt(b[off:min(off+1024, len(b))], int64(off))
				time.Sleep(2 * time.Millisecond)
			}
			f.Close()
			deadline := time.Now().Add(5 * time.Second)
			for {
				got := make([]byte, len(next[1]))
				if _, err := tb.ReadAt(1, got, 0); err == nil && bytes.Equal(got, next[1]) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the rewrite never showed")
				}
				time.Sleep(5 * time.Millisecond)
			}
			stop()
			select {
			case s := <-bad:
				t.Fatalf("a read returned no whole record of either version: %s", s)
			default:
			}
		})
	}
}
