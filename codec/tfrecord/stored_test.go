package tfrecord

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
)

// storedIndex returns a copy of x whose windows are kept in one blob, read
// through r (which reads the returned blob), as a saved table keeps them.
func storedIndex(x *SeekIndex, wrap func(io.ReaderAt) io.ReaderAt) (*SeekIndex, []byte) {
	y := *x
	y.Points = append([]Checkpoint(nil), x.Points...)
	var blob []byte
	for i := range y.Points {
		if p := &y.Points[i]; len(p.Window) > 0 {
			p.Stored = &StoredWindow{Off: int64(len(blob)), Len: len(p.Window), Sum: sha256.Sum256(p.Window)}
			blob = append(blob, p.Window...)
			p.Window = nil
		}
	}
	r := wrap(bytes.NewReader(blob))
	for i := range y.Points {
		if p := &y.Points[i]; p.Stored != nil {
			p.Stored.R = r
		}
	}
	return &y, blob
}

// TestStoredWindows: checkpoints whose windows are stored (read only when
// a read starts at them, and checked against their SHA-256) read every
// record right, reading each window at most once and only those of the
// spans read; a stored window whose bytes are not the ones its digest
// names is refused (a corruption error) even when it would decompress to
// the same output, and one that cannot be read gives the reader's error,
// not a corruption.
func TestStoredWindows(t *testing.T) {
	t.Parallel()
	s := testStream()
	res, recs := indexAll(t, s.z, Gzip, IndexOptions{Spacing: testSpacing})
	var blobRead *countingAt
	x, blob := storedIndex(res.Index, func(r io.ReaderAt) io.ReaderAt { blobRead = &countingAt{r: r}; return blobRead })
	if err := x.Check(int64(len(s.z))); err != nil {
		t.Fatalf("stored windows fail the check: %v", err)
	}
	block := -1
	for i, p := range x.Points {
		if p.Stored != nil && block < 0 && i > len(x.Points)/2 {
			block = i
		}
	}
	if block < 0 || len(blob) == 0 {
		t.Fatal("no stored window")
	}

	t.Run("read", func(t *testing.T) {
		in, _ := NewInflated(bytes.NewReader(s.z), int64(len(s.z)), x, InflatedOptions{})
		last := len(recs) - 1
		if bad := readAll(t, in, recs[last:], s.recs[last:]); bad != 0 {
			t.Fatal("the last record did not read")
		}
		if n, most := blobRead.n, int64(x.Points[x.span(recs[last].Off)].WindowBytes()); n > most {
			t.Fatalf("the last record read %d bytes of stored windows, want at most the %d of its checkpoint's", n, most)
		}
		for i := last; i >= 0; i-- {
			if bad := readAll(t, in, recs[i:i+1], s.recs[i:i+1]); bad != 0 {
				t.Fatalf("record %d did not read", i)
			}
		}
		if blobRead.n > int64(len(blob)) {
			t.Fatalf("%d bytes of stored windows read, %d stored: a window read twice", blobRead.n, len(blob))
		}
	})

	refused := func(t *testing.T, y *SeekIndex) int {
		t.Helper()
		in, _ := NewInflated(bytes.NewReader(s.z), int64(len(s.z)), y, InflatedOptions{})
		bad := 0
		for i := len(recs) - 1; i >= 0; i-- {
			bad += readAll(t, in, recs[i:i+1], s.recs[i:i+1])
		}
		return bad
	}
	p := x.Points[block]
	for _, tc := range []struct {
		name  string
		bytes []byte
	}{
		{"same output, other bytes", codectest.Redeflated(t, blob[p.Stored.Off:p.Stored.Off+int64(p.Stored.Len)])},
		{"byte changed", func() []byte {
			b := bytes.Clone(blob[p.Stored.Off : p.Stored.Off+int64(p.Stored.Len)])
			b[len(b)/2] ^= 0x20
			return b
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			planted := bytes.Clone(blob)
			copy(planted[p.Stored.Off:], tc.bytes)
			y, _ := storedIndex(res.Index, func(io.ReaderAt) io.ReaderAt { return bytes.NewReader(planted) })
			if bad := refused(t, y); bad == 0 {
				t.Fatal("every record read through a planted window")
			}
			_, err := y.Points[block].DeflatedWindow()
			if !errors.Is(err, ErrStoredWindow) {
				t.Fatalf("the planted window: %v, want ErrStoredWindow", err)
			}
			in, _ := NewInflated(bytes.NewReader(s.z), int64(len(s.z)), y, InflatedOptions{})
			for i := len(recs) - 1; i >= 0; i-- {
				if _, err := ReadRecord(in, recs[i], make([]byte, recs[i].Len), 0); err != nil {
					if !errors.Is(err, ErrStoredWindow) || errors.Is(err, codec.ErrCorrupt) {
						t.Fatalf("read through the planted window: %v, want ErrStoredWindow (the table's fault, not the stream's)", err)
					}
					break
				}
			}
		})
	}

	t.Run("short", func(t *testing.T) {
		t.Parallel()
		short := blob[:p.Stored.Off+int64(p.Stored.Len)/2]
		y, _ := storedIndex(res.Index, func(io.ReaderAt) io.ReaderAt { return bytes.NewReader(short) })
		if _, err := y.Points[block].DeflatedWindow(); !errors.Is(err, ErrStoredWindow) || errors.Is(err, codec.ErrCorrupt) {
			t.Fatalf("a window stored short: %v, want ErrStoredWindow", err)
		}
	})

	t.Run("unreadable", func(t *testing.T) {
		t.Parallel()
		y, _ := storedIndex(res.Index, func(io.ReaderAt) io.ReaderAt { return failingAt{} })
		in, _ := NewInflated(bytes.NewReader(s.z), int64(len(s.z)), y, InflatedOptions{})
		rec := recs[len(recs)-1]
		_, err := ReadRecord(in, rec, make([]byte, rec.Len), 0)
		if re := (*WindowReadError)(nil); !errors.As(err, &re) || !errors.Is(err, errDiskGone) || errors.Is(err, codec.ErrCorrupt) {
			t.Fatalf("read with an unreadable window store: %v, want the store's error", err)
		}
	})
}

var errDiskGone = errors.New("disk gone")

// failingAt fails every read.
type failingAt struct{}

func (failingAt) ReadAt([]byte, int64) (int, error) { return 0, errDiskGone }
