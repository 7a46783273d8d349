package index

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/codectest/recfile"
	"github.com/recfs/recfs/codec/leveldb"
	"github.com/recfs/recfs/source/sourcetest"
)

// logBytes returns a leveldb log of recs.
func logBytes(t *testing.T, recs [][]byte) []byte {
	t.Helper()
	b, _ := recfile.LogBytes(t, recs, leveldb.WriterOptions{})
	return b
}

// TestFollowSource: a table of a source that is not a local file (an
// object) follows it through the source's Stater and Reopener: an
// unchanged source is not reopened; an overwritten one is reopened at its
// new version, whose records the table then serves as a new generation
// (a reader of the old generation gets ErrChanged, never bytes of the new
// version), and the old version is closed; Close closes the version read
// last. OpenSource does, with saved tables and without.
func TestFollowSource(t *testing.T) {
	t.Parallel()
	recs := codectest.Records(7, 2000, 'f')
	v1, v2 := logBytes(t, recs[:3]), logBytes(t, recs)
	for _, c := range []struct {
		name string
		open func(context.Context, *sourcetest.Reopenable) (*Table, error)
	}{
		{"OpenSource", func(ctx context.Context, src *sourcetest.Reopenable) (*Table, error) {
			return OpenSource(ctx, src, Options{CacheDir: t.TempDir()})
		}},
		{"OpenSourceNoCache", func(ctx context.Context, src *sourcetest.Reopenable) (*Table, error) {
			return OpenSource(ctx, src, Options{CacheDir: "-"})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			src := sourcetest.NewReopenable("s3://bucket/live.log", v1)
			tb, err := c.open(ctx, src)
			if err != nil {
				t.Fatal(err)
			}
			if changed, err := tb.Refresh(ctx); changed || err != nil || src.Reopens() != 0 {
				t.Fatalf("refresh of an unchanged source: %v, %v, %d reopens", changed, err, src.Reopens())
			}
			gen := tb.Generation()
			type change struct{ from, to int64 }
			changes := make(chan change, 1)
			followed := make(chan error, 1)
			go func() {
				followed <- tb.Follow(ctx, time.Millisecond, func(from, to int64) { changes <- change{from, to} }, func(err error) { t.Errorf("follow: %v", err) })
			}()
			src.Replace(v2)
			select {
			case ch := <-changes:
				if ch != (change{3, 7}) {
					t.Fatalf("change %+v, want 3 -> 7 records", ch)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no change followed 10 s after the source was overwritten")
			}
			if tb.Len() != 7 || tb.Generation() != gen+1 || src.Reopens() != 1 {
				t.Fatalf("after the change: %d records, generation %d (was %d), %d reopens; want 7, %d, 1", tb.Len(), tb.Generation(), gen, src.Reopens(), gen+1)
			}
			for i := range recs {
				if got := readRecord(t, tb, int64(i)); !bytes.Equal(got, recs[i]) {
					t.Fatalf("record %d of the new version differs", i)
				}
			}
			if _, err := tb.ReadAtGeneration(gen, 0, make([]byte, 10), 0); !errors.Is(err, ErrChanged) {
				t.Fatalf("read of the old generation: %v, want ErrChanged", err)
			}
			if !src.Closed() || src.Latest() == src || src.Latest().Closed() {
				t.Fatalf("old version closed %v, new version %p (first %p) closed %v; want the old one closed, the new one open", src.Closed(), src.Latest(), src, src.Latest().Closed())
			}
			cancel()
			if err := <-followed; !errors.Is(err, context.Canceled) {
				t.Fatalf("Follow returned %v, want context.Canceled", err)
			}
			if err := tb.Close(); err != nil || !src.Latest().Closed() {
				t.Fatalf("close: %v, version read last closed %v", err, src.Latest().Closed())
			}
		})
	}
}

// TestFollowSourceNotReopenable: a source that can say it changed but not
// be reopened fails its refreshes with ErrChanged, each passed to Follow's
// onErr; a table of bytes (Build) cannot be followed.
func TestFollowSourceNotReopenable(t *testing.T) {
	t.Parallel()
	recs := codectest.Records(3, 500, 'n')
	data := logBytes(t, recs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	src := sourcetest.NewMem("s3://bucket/fixed.log", data)
	tb, err := OpenSource(ctx, src, Options{CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	src.Replace(logBytes(t, recs[:1]))
	errs := make(chan error, 1)
	followed := make(chan error, 1)
	go func() {
		followed <- tb.Follow(ctx, time.Millisecond, func(int64, int64) { t.Error("a source that cannot be reopened changed the table") }, func(err error) {
			select {
			case errs <- err:
			default:
			}
		})
	}()
	select {
	case err := <-errs:
		if !errors.Is(err, ErrChanged) {
			t.Fatalf("follow error %v, want ErrChanged", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no follow error 10 s after the source was overwritten")
	}
	cancel()
	<-followed
	if tb.Len() != 3 {
		t.Fatalf("%d records, want the 3 of the version opened", tb.Len())
	}
	bt, err := Build(context.Background(), bytes.NewReader(data), int64(len(data)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := bt.Follow(context.Background(), time.Millisecond, nil, nil); !errors.Is(err, errStatic) {
		t.Fatalf("Follow of a Build table: %v, want errStatic", err)
	}
}
