package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/recfs/recfs/index"
	s3obj "github.com/recfs/recfs/source/s3"
	"github.com/recfs/recfs/test/internal/vgw"
)

// The S3 rows measure the targets for s3:// sources against a
// loopback versitygw (posix backend under -work): the index build beside
// one plain GET, mount + first ls with a saved or published index, the
// requests a cat of one record costs, and a warm grep -r beside the same
// mount of the local file. recfs subprocesses reach the store through a
// recording proxy (vgw.Recorder), which counts what each command asked
// for.

// s3IDs are the rows of the S3 section.
var s3IDs = append([]string{"s3-index"}, append(tbfIDs(), "s3-open-cached", "s3-open-published", "s3-cat-one", "s3-grep-warm")...)

// UnitBytes is bytes fetched (lower is better).
var UnitBytes = Unit{"bytes", false}

// Targets of the issue, checked in the rows' details.
const (
	s3IndexTarget = 0.90                   // build ≥ 90% of one GET's throughput
	s3OpenTarget  = 300 * time.Millisecond // mount + first ls
	s3GrepTarget  = 1.2                    // warm grep within 1.2× of the local mount
)

// s3env is what the S3 rows share: the server, the proxy in front of it,
// and the flags that point recfs at the proxy.
type s3env struct {
	srv   *vgw.Server
	rec   *vgw.Recorder
	dir   string   // scratch directory of the section
	flags []string // --s3-endpoint PROXY --s3-path-style
}

// s3Missing returns why the S3 rows cannot run, or "".
func s3Missing() string {
	if vgw.Binary() == "" {
		return "versitygw not found: set RECFS_VERSITYGW, or install it as " +
			"~/.cache/recfs-tools/versitygw-" + vgw.Version + "/versitygw (.ci/run does: " +
			"GOBIN=… go install github.com/versity/versitygw/cmd/versitygw@" + vgw.Version + ")"
	}
	return ""
}

func runS3(b *bench) {
	if why := s3Missing(); why != "" {
		for _, id := range s3IDs {
			b.add(Row{ID: id, Section: "S3", Label: "S3 source over loopback versitygw", Skip: why})
		}
		return
	}
	dir := filepath.Join(b.cfg.work, "s3")
	srv, err := vgw.StartServer(vgw.StartOptions{Root: filepath.Join(dir, "store")})
	if err != nil {
		b.skipS3(err.Error())
		return
	}
	defer srv.Close()
	rec, err := srv.StartRecorder()
	if err != nil {
		b.skipS3(err.Error())
		return
	}
	defer rec.Close()
	// Credentials and region the way AWS tools take them; the endpoint is
	// given with --s3-endpoint on each command line (the proxy's), so the
	// commands shown say where they went.
	restore := setEnv(srv.Env())
	defer restore()
	e := &s3env{srv: srv, rec: rec, dir: dir, flags: []string{"--s3-endpoint", rec.Endpoint, "--s3-path-style"}}
	b.logf("  versitygw %s on %s (proxy %s), objects under %s", vgw.Version, srv.Endpoint, rec.Endpoint, srv.Root)
	if b.cfg.wants("s3-index") {
		b.s3Index(e)
	}
	if b.cfg.wantsAny(tbfIDs()) && b.ctx.Err() == nil {
		b.s3IndexTBF(dir)
	}
	if b.cfg.wantsAny([]string{"s3-open-cached", "s3-open-published", "s3-cat-one"}) && b.ctx.Err() == nil {
		b.s3Open(e)
	}
	if b.cfg.wants("s3-grep-warm") && b.ctx.Err() == nil {
		b.s3Grep(e)
	}
}

// skipS3 records every S3 row as not measured for why.
func (b *bench) skipS3(why string) {
	for _, id := range s3IDs {
		b.add(Row{ID: id, Section: "S3", Label: "S3 source over loopback versitygw", Skip: why})
	}
}

// setEnv sets KEY=VALUE pairs in this process (recfs subprocesses inherit
// them) and returns a function that puts the old values back.
func setEnv(kvs []string) func() {
	type old struct {
		k, v string
		set  bool
	}
	var olds []old
	for _, kv := range kvs {
		k, v, _ := strings.Cut(kv, "=")
		ov, set := os.LookupEnv(k)
		olds = append(olds, old{k, ov, set})
		os.Setenv(k, v)
	}
	return func() {
		for _, o := range olds {
			if o.set {
				os.Setenv(o.k, o.v)
			} else {
				os.Unsetenv(o.k)
			}
		}
	}
}

// putFile uploads the file at path as key.
func (e *s3env) putFile(ctx context.Context, key, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	return e.srv.PutReader(ctx, key, f, st.Size())
}

// --- s3-index ---

// s3Index times an index build of a leveldb log object (in-process, as a
// mount builds it: ranged GETs in parallel parts) beside one plain GET of
// the whole object to io.Discard, alternated round by round.
func (b *bench) s3Index(e *s3env) {
	const key = "index-1k.log"
	label := "index build of a leveldb log object"
	size, n, err := b.putLog(e.srv, e.dir, key, b.cfg.scanBytes)
	if err != nil {
		b.add(Row{ID: "s3-index", Section: "S3", Label: label, Skip: err.Error()})
		return
	}
	r, err := b.indexRounds(e.srv.Client, key, size, n)
	row := Row{ID: "s3-index", Section: "S3", Unit: UnitMBps,
		Label: fmt.Sprintf("index build of a %s leveldb log object of %s-byte records (%s records) over S3, in-process (`index.OpenSource`: ranged GETs, parallel parts), target ≥ %.0f%% of the GET",
			humanBytes(size), humanCount(s3RecordSize), humanCount(n), 100*s3IndexTarget),
		Peer: "one plain GET of the whole object to io.Discard", Limit: true, Cmd: b.selfCmd("s3-index")}
	if err != nil {
		row.Skip = err.Error()
		b.add(row)
		return
	}
	r.fill(&row, size)
	b.add(row)
}

// s3RecordSize is the record size of the s3-index rows' logs.
const s3RecordSize = 1024

// putLog writes a leveldb log of about bytes bytes of 1 KiB records under
// dir, uploads it to srv as key and removes the file; it returns the
// object's size and its record count.
func (b *bench) putLog(srv *vgw.Server, dir, key string, bytes int64) (int64, int, error) {
	n := int(bytes / int64(s3RecordSize+7))
	path := filepath.Join(dir, key)
	b.logf("  writing %s: %d records of %d bytes, then uploading it to %s", path, n, s3RecordSize, srv.Endpoint)
	if err := writeLeveldb(path, n, s3RecordSize); err != nil {
		return 0, 0, err
	}
	defer os.Remove(path) // the object is the only copy needed
	size := fileSize(path)
	start := time.Now()
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	if err := srv.PutReader(b.ctx, key, f, size); err != nil {
		return 0, 0, err
	}
	b.logf("  uploaded %s in %s", humanBytes(size), time.Since(start).Round(time.Millisecond))
	return size, n, nil
}

// indexResult is what indexRounds measured: seconds per round of the
// build (secs[0]) and of the plain GET (secs[1]), and each build's
// requests.
type indexResult struct {
	secs                 [][]float64
	heads, gets, fetched []int64
}

// indexRounds alternates, round by round, an in-process index build of the
// leveldb log object key (n records, size bytes) over c with one plain GET
// of the whole object to io.Discard.
func (b *bench) indexRounds(c *s3obj.Client, key string, size int64, n int) (indexResult, error) {
	ctx, api := b.ctx, c.API()
	var r indexResult
	plain := func() error {
		out, err := api.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(vgw.Bucket), Key: aws.String(key)})
		if err != nil {
			return err
		}
		defer out.Body.Close()
		got, err := io.Copy(io.Discard, out.Body)
		if err == nil && got != size {
			err = fmt.Errorf("GET gave %d bytes of %d", got, size)
		}
		return err
	}
	build := func() error {
		obj, err := c.Open(ctx, vgw.Bucket, key)
		if err != nil {
			return err
		}
		defer obj.Close()
		t, err := index.OpenSource(ctx, obj, index.Options{CacheDir: "-"})
		if err != nil {
			return err
		}
		if t.Len() != int64(n) {
			return fmt.Errorf("recfs index over S3: %d records, want %d", t.Len(), n)
		}
		st := obj.Stats()
		r.heads, r.gets, r.fetched = append(r.heads, st.Heads), append(r.gets, st.Gets), append(r.fetched, st.BytesFetched)
		return nil
	}
	var err error
	r.secs, err = b.funcRounds(b.cfg.runs, build, plain)
	return r, err
}

// fill sets a row's figures (MB/s of the build and of the GET), ratio and
// detail from the rounds.
func (r indexResult) fill(row *Row, size int64) {
	tb, tg := summarizeSecs(r.secs[0]), summarizeSecs(r.secs[1])
	row.Recfs, row.PeerVal = mbps(size, tb.Median), mbps(size, tg.Median)
	row.PairRatio = pairRatio(r.secs[0], r.secs[1])
	row.Detail = fmt.Sprintf("%s; ratio: median of the rounds' ratios, %s; each build: %s",
		spread(tb, tg), targetWord(row.PairRatio >= s3IndexTarget),
		countsText(r.heads, r.gets, r.fetched, size))
}

// countsText describes the requests of a build's runs: "1 HEAD, 70 GETs,
// 1.00 GiB fetched (1.00× the object)", with ranges when runs differ.
func countsText(heads, gets, fetched []int64, size int64) string {
	f := summarizeInts(fetched)
	s := fmt.Sprintf("%s HEAD, %s GETs, %s fetched", intRange(heads), intRange(gets), humanBytes(f))
	if size > 0 {
		s += fmt.Sprintf(" (%.2f× the object)", float64(f)/float64(size))
	}
	return s
}

// intRange prints the values of one count over runs: "3" when they agree,
// "3–5" when not, "?" when there are none.
func intRange(v []int64) string {
	if len(v) == 0 {
		return "?"
	}
	lo, hi := v[0], v[0]
	for _, x := range v {
		lo, hi = min(lo, x), max(hi, x)
	}
	if lo == hi {
		return strconv.FormatInt(lo, 10)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}

// summarizeInts returns the median of v (the larger middle one for an even
// count), or 0.
func summarizeInts(v []int64) int64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]int64(nil), v...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// targetWord says whether a target was met.
func targetWord(met bool) string {
	if met {
		return "target met"
	}
	return "target NOT met"
}

// --- requests seen by the proxy ---

// reqCount is what one command asked the store for.
type reqCount struct {
	Heads, Gets, Others int
	Bytes               int64    // body bytes of the GETs
	Ranges              []string // Range headers of the GETs ("" = whole object)
	Paths               []string // paths of the GETs
}

// countRequests sums requests the proxy recorded.
func countRequests(qs []vgw.Request) reqCount {
	var c reqCount
	for _, q := range qs {
		switch q.Method {
		case "HEAD":
			c.Heads++
		case "GET":
			c.Gets++
			c.Bytes += q.Bytes
			c.Ranges = append(c.Ranges, q.Range)
			c.Paths = append(c.Paths, q.Path)
		default:
			c.Others++
		}
	}
	return c
}

// String is "1 HEAD + 1 GET (1.00 MiB)".
func (c reqCount) String() string {
	s := fmt.Sprintf("%d HEAD + %d GET", c.Heads, c.Gets)
	if c.Gets > 0 {
		s += " (" + humanSize(c.Bytes) + ")"
	}
	if c.Others > 0 {
		s += fmt.Sprintf(" + %d other", c.Others)
	}
	return s
}

// humanSize prints a byte count of any size: "100 B", "1.5 KiB", "12.3 MiB".
func humanSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// runsText describes the requests of every run: "1 HEAD + 0 GET in each of
// 3 runs", or the distinct ones with how often each came.
func runsText(cs []reqCount) string {
	counts := map[string]int{}
	var order []string
	for _, c := range cs {
		s := c.String()
		if counts[s] == 0 {
			order = append(order, s)
		}
		counts[s]++
	}
	if len(order) == 1 {
		return fmt.Sprintf("%s in each of %d runs", order[0], len(cs))
	}
	var parts []string
	for _, s := range order {
		parts = append(parts, fmt.Sprintf("%s ×%d", s, counts[s]))
	}
	return strings.Join(parts, ", ")
}

// worstCount returns the largest HEAD and GET counts over runs.
func worstCount(cs []reqCount) (heads, gets, others int) {
	for _, c := range cs {
		heads, gets, others = max(heads, c.Heads), max(gets, c.Gets), max(others, c.Others)
	}
	return
}

// parseRange reads a "bytes=A-B" Range header.
func parseRange(h string) (lo, hi int64, ok bool) {
	a, z, found := strings.Cut(strings.TrimPrefix(h, "bytes="), "-")
	if !found || !strings.HasPrefix(h, "bytes=") {
		return 0, 0, false
	}
	lo, err1 := strconv.ParseInt(a, 10, 64)
	hi, err2 := strconv.ParseInt(z, 10, 64)
	if err1 != nil || err2 != nil || hi < lo {
		return 0, 0, false
	}
	return lo, hi, true
}

// rangesWithin reports whether every range is a "bytes=A-B" range that
// overlaps [lo, hi] (the bytes of one record's chunks) and lies within the
// cache blocks of block bytes holding them: a GET of only what that
// record needs.
func rangesWithin(ranges []string, lo, hi, block int64) bool {
	if len(ranges) == 0 {
		return false
	}
	first, last := lo/block*block, (hi/block+1)*block-1
	for _, r := range ranges {
		a, z, ok := parseRange(r)
		if !ok || z < lo || a > hi || a < first || z > last {
			return false
		}
	}
	return true
}

// --- timed rounds with the proxy watching ---

// s3Job is a job of observedRounds: Counted jobs have their requests
// recorded run by run.
type s3Job struct {
	job
	counted bool
}

// observedRounds is timeRounds with the proxy's requests taken around each
// timed command: it returns each job's seconds per round and, for counted
// jobs, its requests per round (only what the timed command caused; a
// prepare's requests are dropped).
func (b *bench) observedRounds(e *s3env, jobs []s3Job, o timeOpts) ([][]float64, [][]reqCount, string, error) {
	secs := make([][]float64, len(jobs))
	reqs := make([][]reqCount, len(jobs))
	var shown []string
	for _, j := range jobs {
		s := j.cmd + o.sinkSuffix()
		if j.prepare != "" {
			s = "{ " + j.prepare + "; } ; " + s
		}
		shown = append(shown, s)
	}
	for i := 0; i < o.warmup+o.runs; i++ {
		for k, j := range jobs {
			if j.prepare != "" {
				if _, err := b.sh(j.prepare); err != nil {
					return nil, nil, "", err
				}
			}
			e.rec.Take()
			start := time.Now()
			if _, err := b.sh(j.cmd + o.sinkSuffix()); err != nil {
				return nil, nil, "", err
			}
			d := time.Since(start).Seconds()
			q := countRequests(e.rec.Take())
			b.logf("    round %d, job %d: %.3f s, %s", i, k, d, q)
			if i >= o.warmup {
				secs[k] = append(secs[k], d)
				if j.counted {
					reqs[k] = append(reqs[k], q)
				}
			}
		}
	}
	return secs, reqs, strings.Join(shown, " ; "), nil
}

// --- s3-open-cached, s3-open-published, s3-cat-one ---

// s3Open times mount + first ls of a 1M-record object with a saved index
// and with only a published one, beside the same for the local file, and
// counts what a cat of one record from a fresh mount fetches.
func (b *bench) s3Open(e *s3env) {
	ids := []string{"s3-open-cached", "s3-open-published", "s3-cat-one"}
	n := b.cfg.openRecords
	log, err := b.smallLog(n)
	if err != nil {
		b.skipAll(ids, "S3 open", "", err.Error())
		return
	}
	const key = "open.log"
	url := vgw.URL(key)
	if err := e.putFile(b.ctx, key, log); err != nil {
		b.skipAll(ids, "S3 open", "", err.Error())
		return
	}
	mS3 := filepath.Join(b.cfg.work, "mnt", "s3-open")
	mLocal := filepath.Join(b.cfg.work, "mnt", "s3-open-local")
	mPub := filepath.Join(b.cfg.work, "mnt", "s3-open-pub")
	cS3, cLocal, cPub, cPublisher := filepath.Join(e.dir, "cache-s3"), filepath.Join(e.dir, "cache-local"),
		filepath.Join(e.dir, "cache-fresh"), filepath.Join(e.dir, "cache-publisher")
	kS3 := b.recfsKind("gofuse", url, mS3, cS3, e.flags...)
	kLocal := b.recfsKind("gofuse", log, mLocal, cLocal)
	kPub := b.recfsKind("gofuse", url, mPub, cPub, e.flags...)
	for _, k := range []fsKind{kS3, kLocal, kPub} {
		os.MkdirAll(k.Dir, 0o755)
		b.mounts.track(k)
	}
	defer func() {
		for _, k := range []fsKind{kS3, kLocal, kPub} {
			b.mounts.down(k.Dir)
		}
	}()
	// Save the indexes (the s3 one keyed by the proxy's endpoint, as the
	// timed mounts name the store) and publish the sidecar from another
	// cache directory.
	b.logf("  building the saved indexes of %s and %s, publishing the sidecar", url, log)
	for _, cmd := range []string{
		shellJoin(append(append([]string{b.cfg.bin, "index", "--cache-dir", cS3}, e.flags...), url)...),
		shellJoin(b.cfg.bin, "index", "--cache-dir", cLocal, log),
		shellJoin(append(append([]string{b.cfg.bin, "index", "--publish", "--cache-dir", cPublisher}, e.flags...), url)...),
	} {
		if _, err := b.sh(cmd); err != nil {
			b.skipAll(ids, "S3 open", "", err.Error())
			return
		}
	}
	first := func(k fsKind) string { return k.mount + " && ls " + shellQuote(k.Dir) }
	unmount := func(k fsKind) string { return k.unmount + " 2>/dev/null || true" }
	jobs := []s3Job{
		{job{cmd: first(kS3), prepare: unmount(kS3)}, true},
		{job{cmd: first(kPub), prepare: unmount(kPub) + "; rm -rf " + shellQuote(cPub)}, true},
		{job{cmd: first(kLocal), prepare: unmount(kLocal) + "; cat " + shellQuote(log) + " > /dev/null"}, false},
	}
	label := fmt.Sprintf("`recfs mount --daemon` + first `ls` of a %s-record object (%s)", humanCount(n), humanBytes(fileSize(log)))
	if b.cfg.wantsAny(ids[:2]) {
		// No warm-up round: the indexes are saved and the sidecar
		// published already, and every run mounts afresh; at 1M records
		// one mount + ls takes seconds (the listing), three jobs a round.
		b.logf("  s3-open: %d rounds over s3 (saved index), s3 (published index), local file", b.cfg.runs)
		secs, reqs, cmd, err := b.observedRounds(e, jobs, timeOpts{runs: b.cfg.runs, shell: true})
		for i, what := range []string{"saved index (`--cache-dir` holds it)", "published index only (fresh `--cache-dir`, `recfs index --publish` done before)"} {
			row := Row{ID: ids[i], Section: "S3", Unit: UnitSeconds,
				Label: label + " with a " + what + fmt.Sprintf(", target ≤ %d ms and ≤ 1 HEAD + 1 GET", s3OpenTarget.Milliseconds()),
				Peer:  "the same for the local file (saved index, page cache warm)", Limit: true, Cmd: cmd}
			if err != nil {
				row.Skip = err.Error()
				b.add(row)
				continue
			}
			ts, tl := summarizeSecs(secs[i]), summarizeSecs(secs[2])
			row.Recfs, row.PeerVal = ts.Median, tl.Median
			row.PairRatio = pairRatio(secs[i], secs[2])
			h, g, o := worstCount(reqs[i])
			met := ts.Median <= s3OpenTarget.Seconds() && h <= 1 && g <= 1 && o == 0
			row.Detail = fmt.Sprintf("%s; over the local file: %s (median of the rounds' differences); requests: %s; %s",
				spread(ts, tl), formatDelta(medianDiff(secs[i], secs[2])), runsText(reqs[i]), targetWord(met))
			b.add(row)
		}
	}
	if b.cfg.wants("s3-cat-one") && b.ctx.Err() == nil {
		b.s3CatOne(e, kS3, log, n)
	}
}

// s3CatOne counts the requests of a fresh mount (saved index) and a cat of
// one record in the middle, beside the record's size.
func (b *bench) s3CatOne(e *s3env, k fsKind, log string, n int) {
	i := n / 2
	name := recordName(i, n)
	row := Row{ID: "s3-cat-one", Section: "S3", Unit: UnitBytes,
		Label: fmt.Sprintf("bytes fetched by a fresh mount (saved index) + `cat` of record %d of the %s-record object; target: 1 HEAD + ranged GETs of only that record's blocks", i, humanCount(n)),
		Peer:  "the record's size", Limit: true}
	// Where the record lies (offset and length of its payload) and its bytes.
	out, err := b.sh(shellJoin(b.cfg.bin, "ls", log, strconv.Itoa(i)))
	var off, length int64
	if err == nil {
		f := strings.Fields(out)
		if len(f) != 3 {
			err = fmt.Errorf("recfs ls %s %d: %q", log, i, out)
		} else {
			off, err = strconv.ParseInt(f[1], 10, 64)
			if err == nil {
				length, err = strconv.ParseInt(f[2], 10, 64)
			}
		}
	}
	if err != nil {
		row.Skip = err.Error()
		b.add(row)
		return
	}
	// leveldb framing: a 7-byte header a chunk, chunks cut at 32 KiB blocks.
	end := off + length + 7*(length/32768+2)
	rec := filepath.Join(k.Dir, name)
	cmd := k.unmount + " 2>/dev/null; " + k.mount + " && cat " + shellQuote(rec)
	row.Cmd = cmd
	var cs []reqCount
	var fetched []int64
	within := true
	for r := 0; r < b.cfg.runs; r++ {
		b.mounts.down(k.Dir)
		b.mounts.track(k)
		e.rec.Take()
		_, err := b.sh(k.mount)
		var got string
		if err == nil {
			got, err = b.sh("cat " + shellQuote(rec) + " | wc -c")
		}
		q := countRequests(e.rec.Take())
		if err == nil && strings.TrimSpace(got) != strconv.FormatInt(length, 10) {
			err = fmt.Errorf("cat %s: %s bytes, want %d", rec, strings.TrimSpace(got), length)
		}
		if err != nil {
			row.Skip = err.Error()
			b.add(row)
			return
		}
		cs = append(cs, q)
		fetched = append(fetched, q.Bytes)
		within = within && q.Others == 0 && rangesWithin(q.Ranges, off, min(end, fileSize(log))-1, 1<<20)
	}
	h, _, _ := worstCount(cs)
	met := within && h == 1
	row.Recfs, row.PeerVal = float64(summarizeInts(fetched)), float64(length)
	row.Detail = fmt.Sprintf("requests: %s; GET ranges %s; record %d B at offset %d; every GET within the record's 1 MiB blocks: %v; %s",
		runsText(cs), strings.Join(cs[0].Ranges, ","), length, off, within, targetWord(met))
	b.add(row)
}

// medianDiff returns the median over rounds of a[i]-b[i].
func medianDiff(a, b []float64) float64 {
	var d []float64
	for i := range a {
		if i < len(b) {
			d = append(d, a[i]-b[i])
		}
	}
	return summarizeSecs(d).Median
}

// formatDelta prints a difference of seconds in milliseconds with its
// sign: "+12 ms", "-3 ms".
func formatDelta(secs float64) string {
	return fmt.Sprintf("%+.0f ms", secs*1000)
}

// --- s3-grep-warm ---

// s3Grep times a warm grep -r through an s3 mount beside the same mount of
// the local file (the mount rows' data), rounds alternated, each timed run
// right after an untimed one.
func (b *bench) s3Grep(e *s3env) {
	n := b.cfg.mountRecords
	const rs = 1024
	row := Row{ID: "s3-grep-warm", Section: "S3", Unit: UnitSeconds,
		Label: fmt.Sprintf("`grep -r` warm over %s × %s records through an s3 mount (recfs gofuse), target within %.1f× of the local file",
			humanCount(n), humanBytes(rs), s3GrepTarget),
		Peer: "the same mount of the local file", Limit: true}
	log := filepath.Join(e.dir, "grep.log")
	const key = "grep.log"
	if err := writeLeveldb(log, n, rs); err != nil {
		row.Skip = err.Error()
		b.add(row)
		return
	}
	defer os.Remove(log)
	if err := e.putFile(b.ctx, key, log); err != nil {
		row.Skip = err.Error()
		b.add(row)
		return
	}
	kS3 := b.recfsKind("gofuse", vgw.URL(key), filepath.Join(b.cfg.work, "mnt", "s3-grep"), filepath.Join(e.dir, "cache-grep-s3"), e.flags...)
	kLocal := b.recfsKind("gofuse", log, filepath.Join(b.cfg.work, "mnt", "s3-grep-local"), filepath.Join(e.dir, "cache-grep-local"))
	for _, k := range []fsKind{kS3, kLocal} {
		if err := b.mounts.up(k); err != nil {
			row.Skip = err.Error()
			b.add(row)
			return
		}
		defer b.mounts.down(k.Dir)
	}
	grep := func(k fsKind) string { return "grep -r " + needle + " " + shellQuote(k.Dir) }
	o := timeOpts{runs: b.cfg.runs, warmup: 1, pipe: true}
	jobs := []s3Job{
		{job{cmd: grep(kS3), prepare: grep(kS3) + o.sinkSuffix()}, true},
		{job{cmd: grep(kLocal), prepare: grep(kLocal) + o.sinkSuffix()}, false},
	}
	// The first pass after mounting, through the proxy: not the row's
	// figure, but what it cost is worth showing beside it (the warm-up
	// round that follows makes every record warm again: a first pass of
	// more than a minute has its early pages paged out by DAMON).
	first := func(k fsKind) (float64, reqCount, error) {
		e.rec.Take()
		start := time.Now()
		_, err := b.sh(grep(k) + o.sinkSuffix())
		return time.Since(start).Seconds(), countRequests(e.rec.Take()), err
	}
	fs3, fq, err := first(kS3)
	var fl float64
	if err == nil {
		fl, _, err = first(kLocal)
	}
	if err != nil {
		row.Skip = err.Error()
		b.add(row)
		return
	}
	b.logf("  s3-grep-warm: first pass after mount: s3 %.2f s (%s), local %.2f s", fs3, fq, fl)
	b.logf("  s3-grep-warm: %d rounds over s3 and local mounts", 1+b.cfg.runs)
	drops := cacheDrops()
	secs, reqs, cmd, err := b.observedRounds(e, jobs, o)
	row.Cmd = cmd
	if err != nil {
		row.Skip = err.Error()
		b.add(row)
		return
	}
	ts, tl := summarizeSecs(secs[0]), summarizeSecs(secs[1])
	row.Recfs, row.PeerVal = ts.Median, tl.Median
	row.PairRatio = pairRatio(secs[0], secs[1])
	dropped := ""
	if d := cacheDrops() - drops; drops >= 0 && d > 0 {
		dropped = fmt.Sprintf("; WARNING: another process dropped the kernel's caches %d times during the row: its figures are not warm", d)
	}
	row.Detail = fmt.Sprintf("%s; ratio: median of the rounds' ratios, %s; requests of each timed s3 run: %s; the first pass after mounting (not this row's figure): s3 %s s with %s, local %s s%s",
		spread(ts, tl), targetWord(row.PairRatio >= 1/s3GrepTarget), runsText(reqs[0]), formatFigure(fs3), fq, formatFigure(fl), dropped)
	b.add(row)
}
