package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/tsdb/chunks"
	"github.com/prometheus/prometheus/tsdb/record"
	"github.com/prometheus/prometheus/tsdb/wlog"
	"github.com/prometheus/prometheus/util/compression"
	"github.com/recfs/recfs/index"
)

// The rows of the WAL section.
var walIDs = []string{"wal-prom-scan", "wal-prom-cat", "wal-prom-grep"}

// promPattern is what the grep row looks for: one series of the 20,000
// (code="500" of handler /api/v1/query7), its series line and samples.
const promPattern = `http_requests_total\{code="500", handler="/api/v1/query7"`

// runWAL measures a Prometheus WAL written by Prometheus's own writer
// (snappy, series then samples batches of a scrape of 20,000 series every
// 15 s) of scanBytes/4: the index build against wlog.Reader, the decoded
// cat against Prometheus's record.Decoder printing the same fields, and
// grep -r over the decoded mount against grep over the decoded text.
func runWAL(b *bench) {
	size := max(b.cfg.scanBytes/4, 16<<20)
	dir := filepath.Join(b.cfg.work, "wal", "prom", "wal")
	b.logf("  writing %s: a %s Prometheus WAL (prometheus tsdb/wlog writer, snappy)", dir, humanBytes(size))
	recs, err := writePromWAL(dir, size)
	if err != nil {
		b.skipAll(walIDs, "Prometheus WAL", "", err.Error())
		return
	}
	segs, _ := filepath.Glob(filepath.Join(dir, "0*"))
	sort.Strings(segs)
	var total int64
	for _, s := range segs {
		total += fileSize(s)
		_ = catCmd(s)()
	}
	label := fmt.Sprintf("a %s Prometheus WAL of %d segments (snappy, %s records)", humanBytes(total), len(segs), humanCount(recs))
	if b.cfg.wants("wal-prom-scan") {
		recfs := func() error {
			n := 0
			for _, s := range segs {
				t, err := index.Open(b.ctx, s, index.Options{CacheDir: "-"})
				if err != nil {
					return err
				}
				n += int(t.Len())
				t.Close()
			}
			return wantCount("recfs", n, recs)
		}
		ref := func() error {
			r, err := wlog.NewSegmentsReader(dir)
			if err != nil {
				return err
			}
			defer r.Close()
			rd := wlog.NewReader(r)
			n := 0
			for rd.Next() {
				n++
			}
			if rd.Err() != nil {
				return rd.Err()
			}
			return wantCount("wlog.Reader", n, recs)
		}
		ts, err := b.timeFuncs(b.cfg.runs, recfs, ref)
		if err != nil {
			b.skipAll([]string{"wal-prom-scan"}, label, "", err.Error())
		} else {
			b.add(Row{ID: "wal-prom-scan", Section: "WAL", Label: "scan " + label + ": recfs index build", Unit: UnitMBps,
				Recfs: mbps(total, ts[0].Median), Peer: "prometheus wlog.Reader", PeerVal: mbps(total, ts[1].Median),
				Cmd: b.selfCmd("wal-prom-scan"), Detail: spread(ts[0], ts[1])})
		}
	}
	catAll := "for s in " + shellQuote(dir) + "/0*; do " + shellQuote(b.cfg.bin) + " cat --decode prometheus --cache-dir - \"$s\"; done"
	if b.cfg.wants("wal-prom-cat") {
		recfs := func() error { return exec.Command("sh", "-c", catAll+" > /dev/null").Run() }
		ref := func() error { return printPromWAL(dir, io.Discard) }
		ts, err := b.timeFuncs(b.cfg.runs, recfs, ref)
		if err != nil {
			b.skipAll([]string{"wal-prom-cat"}, label, "", err.Error())
		} else {
			b.add(Row{ID: "wal-prom-cat", Section: "WAL", Label: "`recfs cat --decode prometheus` of " + label, Unit: UnitMBps,
				Recfs: mbps(total, ts[0].Median), Peer: "wlog.Reader + record.Decoder printing the same fields (Go)", PeerVal: mbps(total, ts[1].Median),
				Cmd: b.selfCmd("wal-prom-cat"), Detail: spread(ts[0], ts[1])})
		}
	}
	if b.cfg.wants("wal-prom-grep") {
		mnt := filepath.Join(b.cfg.work, "mnt", "wal-prom")
		os.MkdirAll(mnt, 0o755)
		k := b.recfsKind("gofuse", dir, mnt, "-", "--decode", "prometheus")
		b.mounts.track(k)
		pat := shellQuote(promPattern)
		// A fresh mount each run: a first pass, nothing rendered yet.
		recfs := func() error {
			if err := b.mounts.up(k); err != nil {
				return err
			}
			defer b.mounts.down(mnt)
			return exec.Command("sh", "-c", "grep -rE "+pat+" "+shellQuote(mnt)+" > /dev/null").Run()
		}
		peer := func() error { return exec.Command("sh", "-c", "{ "+catAll+"; } | grep -E "+pat+" > /dev/null").Run() }
		ts, err := b.timeFuncs(b.cfg.runs, recfs, peer)
		if err != nil {
			b.skipAll([]string{"wal-prom-grep"}, label, "", err.Error())
			return
		}
		b.add(Row{ID: "wal-prom-grep", Section: "WAL", Label: "mount with `--decode prometheus` + first `grep -r` for one series of " + label, Unit: UnitSeconds,
			Recfs: ts[0].Median, Peer: "`recfs cat --decode prometheus | grep`", PeerVal: ts[1].Median,
			Cmd: b.selfCmd("wal-prom-grep"), Detail: spread(ts[0], ts[1])})
	}
}

func wantCount(who string, n, want int) error {
	if n != want {
		return fmt.Errorf("%s: %d records, want %d", who, n, want)
	}
	return nil
}

// writePromWAL writes with Prometheus's writer a WAL of about size bytes:
// a series record of 20,000 series, then a samples record of them every
// scrape (15 s apart), snappy-compressed; it returns the record count.
func writePromWAL(dir string, size int64) (int, error) {
	os.RemoveAll(dir)
	w, err := wlog.New(nil, nil, dir, compression.Snappy)
	if err != nil {
		return 0, err
	}
	var enc record.Encoder
	const nSeries = 20000
	var series []record.RefSeries
	for i := range nSeries {
		series = append(series, record.RefSeries{Ref: chunks.HeadSeriesRef(i + 1), Labels: labels.FromStrings(
			"__name__", "http_requests_total", "code", fmt.Sprint(200+100*(i%4)), "handler", fmt.Sprintf("/api/v1/query%d", i/4),
			"instance", "10.1.2.3:9090", "job", "prometheus")})
	}
	n := 0
	if err := w.Log(enc.Series(series, nil)); err != nil {
		return 0, err
	}
	n++
	samples := make([]record.RefSample, nSeries)
	var buf []byte
	for t := int64(1_700_000_000_000); ; t += 15000 {
		for i := range samples {
			samples[i] = record.RefSample{Ref: chunks.HeadSeriesRef(i + 1), T: t + int64(i%100), V: math.Floor(float64(t-1_700_000_000_000)/1000) + float64(i%7)}
		}
		buf = enc.Samples(samples, buf[:0])
		if err := w.Log(buf); err != nil {
			return 0, err
		}
		n++
		if _, off, err := w.LastSegmentAndOffset(); err == nil {
			if first, last, _ := wlog.Segments(dir); int64(last-first)*wlog.DefaultSegmentSize+int64(off) >= size {
				break
			}
		}
	}
	return n, w.Close()
}

// printPromWAL is the peer of the decoded cat: Prometheus's reader and
// decoder printing each series and sample with the fields recfs shows.
func printPromWAL(dir string, out io.Writer) error {
	r, err := wlog.NewSegmentsReader(dir)
	if err != nil {
		return err
	}
	defer r.Close()
	rd := wlog.NewReader(r)
	bw := bufio.NewWriterSize(out, 1<<20)
	dec := record.NewDecoder(nil, nil)
	known := map[chunks.HeadSeriesRef]string{}
	var series []record.RefSeries
	var samples []record.RefSample
	for rd.Next() {
		rec := rd.Record()
		switch dec.Type(rec) {
		case record.Series:
			series, err = dec.Series(rec, series[:0])
			for _, s := range series {
				l := s.Labels.String()
				known[s.Ref] = l
				fmt.Fprintf(bw, "series %d %s\n", s.Ref, l)
			}
		case record.Samples:
			samples, err = dec.Samples(rec, samples[:0])
			for _, s := range samples {
				fmt.Fprintf(bw, "sample %d %s %g %s\n", s.Ref, timeRFC3339(s.T), s.V, known[s.Ref])
			}
		}
		if err != nil {
			return err
		}
	}
	if err := rd.Err(); err != nil {
		return err
	}
	return bw.Flush()
}

// timeRFC3339 formats a Prometheus timestamp as recfs does.
func timeRFC3339(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z07:00")
}
