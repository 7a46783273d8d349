package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/codectest/recfile"
	"github.com/recfs/recfs/codec/wlog"
)

// promSegment frames recs as a Prometheus WAL segment of compression c.
func promSegment(t testing.TB, recs [][]byte, c wlog.Compression) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := wlog.NewWriter(&buf, wlog.WriterOptions{Compression: c})
	for _, r := range recs {
		if _, err := w.WriteRecord(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestPrometheusOpenReadCache: a segment of each compression is detected
// by content, read back record by record (in pieces, decompressed), saved
// and loaded from the cache, and described by its flavour.
func TestPrometheusOpenReadCache(t *testing.T) {
	t.Parallel()
	recs := append(codectest.Records(200, 3000, 'a'), bytes.Repeat([]byte("z"), 300000), []byte{})
	for _, c := range []wlog.Compression{wlog.None, wlog.Snappy, wlog.Zstd} {
		t.Run(c.String(), func(t *testing.T) {
			t.Parallel()
			cache := t.TempDir()
			path := filepath.Join(t.TempDir(), "00000003")
			recfile.WriteFile(t, path, promSegment(t, recs, c))
			checkBuiltThenCached(t, path, cache, codec.PrometheusWAL, recs, func(tb *Table) {
				if in := tb.Info(); c != wlog.None && !strings.Contains(in.Flavor, c.String()) {
					t.Fatalf("flavor %q does not say %v", in.Flavor, c)
				}
			})
		})
	}
}

// TestPrometheusReadOnly: appends and creation are refused up front and at
// append time, naming the format's reason, and the segment is left as it
// was.
func TestPrometheusReadOnly(t *testing.T) {
	t.Parallel()
	seg := promSegment(t, codectest.Records(3, 10, 'a'), wlog.None)
	tb, path := openTemp(t, seg, Options{CacheDir: "-", Writable: true})
	for name, err := range map[string]error{
		"check": tb.CheckAppend(),
		"append": func() error {
			_, err := tb.Append(context.Background(), [][]byte{[]byte("x")}, AppendOptions{})
			return err
		}(),
	} {
		if !errors.Is(err, ErrReadOnlyFormat) || !errors.Is(err, codec.ErrUnsupported) || !strings.Contains(err.Error(), "Prometheus") {
			t.Errorf("%s: %v, want ErrReadOnlyFormat saying Prometheus", name, err)
		}
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, seg) {
		t.Fatal("the segment changed")
	}
	if _, err := Create(context.Background(), filepath.Join(t.TempDir(), "new"), codec.PrometheusWAL, false, Options{CacheDir: "-"}); !errors.Is(err, ErrReadOnlyFormat) {
		t.Fatalf("create: %v", err)
	}
}

// TestPrometheusFollow: records a live Prometheus appends to its segment
// (whole pages and partial ones, a record crossing pages written in two
// flushes) are taken in by scanning the new tail only; the generation
// stays, and a record half written is hidden until it is whole.
func TestPrometheusFollow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	recs := codectest.Records(60, 2500, 'a')
	recs = append(recs, bytes.Repeat([]byte("big"), 30000)) // crosses pages
	recs = append(recs, codectest.Records(20, 700, 'k')...)
	full := promSegment(t, recs, wlog.Snappy)
	sc := wlog.NewScanner(bytes.NewReader(full), int64(len(full)), wlog.Options{})
	var ends []int64
	for sc.Next() {
		ends = append(ends, sc.Record().End())
	}
	tb, path := openNamed(t, "00000000", full[:ends[9]], Options{CacheDir: "-"})
	gen := tb.Generation()
	for _, cut := range []int64{ends[30], ends[60] - 1000, ends[60], int64(len(full))} {
		old, _ := os.ReadFile(path)
		f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		f.Write(full[len(old):cut])
		f.Close()
		if _, err := tb.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		want := 0
		for want < len(ends) && ends[want] <= cut {
			want++
		}
		if tb.Len() != int64(want) || tb.Generation() != gen {
			t.Fatalf("cut %d: %d records (want %d), generation %d (was %d), damage %v", cut, tb.Len(), want, tb.Generation(), gen, tb.Damage())
		}
		codectest.SamePayloads(t, fmt.Sprintf("cut %d", cut), readRecords(t, tb), recs[:want])
	}
	if len(tb.Damage()) > 0 {
		t.Fatalf("damage after the segment is whole: %v", tb.Damage())
	}
}

// TestPrometheusDamage: a damaged page is skipped, its range reported, and
// every record outside it is kept.
func TestPrometheusDamage(t *testing.T) {
	t.Parallel()
	recs := codectest.Records(100, 2000, 'a')
	seg := promSegment(t, recs, wlog.None)
	seg[wlog.PageSize+100] ^= 0x10
	tb, err := Build(context.Background(), bytes.NewReader(seg), int64(len(seg)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := tb.Damage()
	// Page 1 is lost with the records crossing into and out of it.
	if len(d) == 0 || d[0].Off < 0 || d[len(d)-1].Off+d[len(d)-1].Len > 3*wlog.PageSize {
		t.Fatalf("damage %v, want it about page 1", d)
	}
	if tb.Len() < int64(len(recs))-18 || tb.Len() >= int64(len(recs)) {
		t.Fatalf("%d records of %d kept", tb.Len(), len(recs))
	}
	if _, err := Build(context.Background(), bytes.NewReader(seg), int64(len(seg)), Options{Strict: true}); !errors.Is(err, codec.ErrCorrupt) {
		t.Fatalf("strict build: %v", err)
	}
}
