package e2e

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/tsdb/chunks"
	"github.com/prometheus/prometheus/tsdb/record"
	"github.com/prometheus/prometheus/tsdb/wlog"
	"github.com/prometheus/prometheus/util/compression"
)

// ckptT0 is the time of the first samples of refCheckpointWAL.
const ckptT0 = int64(1_700_000_000_000)

// ckptSample is the line --decode prometheus shows for the sample of
// series ref (code) written in segment seg by refCheckpointWAL or
// logSegment.
func ckptSample(ref, seg int, code string) string {
	ts := time.UnixMilli(ckptT0 + int64(seg)*1000).UTC().Format("2006-01-02T15:04:05.000Z")
	return fmt.Sprintf("sample %d %s %d http_requests_total{code=%q}", ref, ts, seg, code)
}

// logSegment logs, with Prometheus's writer, the series (ref → code) not
// nil and one sample per ref of refs at segment seg's time and value.
func logSegment(t *testing.T, w *wlog.WL, seg int, series map[int]string, refs ...int) {
	t.Helper()
	var enc record.Encoder
	var ss []record.RefSeries
	for ref := 1; ref <= 9; ref++ {
		if code, ok := series[ref]; ok {
			ss = append(ss, record.RefSeries{Ref: chunks.HeadSeriesRef(ref), Labels: labels.FromStrings("__name__", "http_requests_total", "code", code)})
		}
	}
	if len(ss) > 0 {
		if err := w.Log(enc.Series(ss, nil)); err != nil {
			t.Fatal(err)
		}
	}
	var samples []record.RefSample
	for _, ref := range refs {
		samples = append(samples, record.RefSample{Ref: chunks.HeadSeriesRef(ref), T: ckptT0 + int64(seg)*1000, V: float64(seg)})
	}
	if err := w.Log(enc.Samples(samples, nil)); err != nil {
		t.Fatal(err)
	}
}

// refCheckpointWAL writes a wal/ directory as Prometheus leaves it after a
// head truncation, with Prometheus's own code: segments 0 and 1 hold the
// series records (refs 1 and 2) and samples, segments 2 and 3 samples
// only; wlog.Checkpoint writes checkpoint.00000001 from segments 0-1 and
// Truncate deletes them. The series then live only in the checkpoint.
func refCheckpointWAL(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "wal")
	w, err := wlog.New(nil, nil, dir, compression.Snappy)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	logSegment(t, w, 0, map[int]string{1: "500", 2: "200"}, 1, 2)
	for seg := 1; seg <= 3; seg++ {
		if _, err := w.NextSegmentSync(); err != nil {
			t.Fatal(err)
		}
		logSegment(t, w, seg, nil, 1, 2)
	}
	keep := func(chunks.HeadSeriesRef) bool { return true }
	if _, err := wlog.Checkpoint(slog.New(slog.DiscardHandler), w, 0, 1, keep, ckptT0, false, false); err != nil {
		t.Fatal(err)
	}
	if err := w.Truncate(2); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if segs := segmentNames(t, dir); strings.Join(segs, " ") != "00000002 00000003 checkpoint.00000001" {
		t.Fatalf("the reference left %q", segs)
	}
	return dir
}

// segmentNames lists dir.
func segmentNames(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range m {
		m[i] = filepath.Base(m[i])
	}
	return m
}

// TestPrometheusCheckpointCat: recfs cat --decode prometheus of a segment
// after a checkpoint shows its samples with the labels of series recorded
// only in the checkpoint directory.
func TestPrometheusCheckpointCat(t *testing.T) {
	t.Parallel()
	wal := refCheckpointWAL(t)
	r := runRecfs(t, "cat", "--decode", "prometheus", filepath.Join(wal, "00000003"))
	want := ckptSample(1, 3, "500") + "\n" + ckptSample(2, 3, "200") + "\n"
	if r.code != 0 || r.stdout != want {
		t.Fatalf("exit %d, %q (stderr %q); want %q", r.code, r.stdout, r.stderr, want)
	}
}

// TestPrometheusCheckpointMount: a followed wal/ mount with --decode
// prometheus, on both backends, labels the samples of the segments after
// a checkpoint with the series the checkpoint holds; when the writer
// starts the next segment (as Prometheus does on restart or when a
// segment is full), the new segment appears, with its own series and the
// earlier ones labelled.
func TestPrometheusCheckpointMount(t *testing.T) {
	needFUSE(t)
	eachBackend(t, func(t *testing.T, backend string) {
		wal := refCheckpointWAL(t)
		mnt := newMountDir(t)
		startMount(t, wal, mnt, "--backend", backend, "--follow", "--follow-interval", "200ms", "--decode", "prometheus")
		got := grepR(t, `http_requests_total\{code="500"\}$`, mnt)
		for _, want := range []string{
			"/checkpoint.00000001/00000000/", "series 1 http_requests_total{code=\"500\"}",
			"/00000002/", ckptSample(1, 2, "500"),
			"/00000003/", ckptSample(1, 3, "500"),
		} {
			if !strings.Contains(strings.Join(got, "\n"), want) {
				t.Errorf("grep -r code=500 lacks %q:\n%s", want, strings.Join(got, "\n"))
			}
		}
		// The next segment: Prometheus's writer starts 00000004 when
		// it opens the directory again.
		w, err := wlog.New(nil, nil, wal, compression.Snappy)
		if err != nil {
			t.Fatal(err)
		}
		logSegment(t, w, 4, map[int]string{3: "404"}, 1, 3)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{ckptSample(1, 4, "500"), ckptSample(3, 4, "404")} {
			lines := waitLines(t, "^"+regexp.QuoteMeta(want)+"$", mnt, 0, 15*time.Second)
			if len(lines) != 1 || !strings.Contains(lines[0], "/00000004/") {
				t.Errorf("%q: %q, want one line in 00000004", want, lines)
			}
		}
	})
}
