package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/cockroachdb/pebble/v2/record"
	"github.com/grailbio/base/recordio"
	"github.com/recfs/recfs/index"
	"github.com/syndtr/goleveldb/leveldb/journal"
)

// section is one group of rows: the IDs it can produce (for -only) and the
// function that measures them.
type section struct {
	name string
	ids  []string
	run  func(b *bench)
}

// sections in document order.
var sections = []section{
	{"Scan", []string{"scan-1k-pebble", "scan-1k-goleveldb", "scan-1k-cat", "scan-1k-grailbio", "scan-1k-rio-cat",
		"scan-64k-pebble", "scan-64k-goleveldb", "scan-64k-cat", "scan-64k-grailbio", "scan-64k-rio-cat"}, runScan},
	{"Open", []string{"open-cold", "open-warm"}, runOpen},
	{"Mount", []string{"mount-ls", "mount-grep-first", "mount-grep-warm", "mount-cat", "mount-rss"}, runMount},
	{"Big record", []string{"big-read"}, runBig},
	{"Memory", []string{"mem-bytes-per-record", "mem-rss"}, runMemory},
	{"Append", []string{"append-cli", "append-mount-gofuse", "append-mount-bazil"}, runAppend},
	{"Writes", writeIDs, runWrites},
	{"Compressed TFRecord", gzIDs, runGzip},
	{"S3", s3IDs, runS3},
	{"WAL", walIDs, runWAL},
	{"Decode", decodeIDs, runDecode},
	{"Kafka", kafkaIDs, runKafka},
	{"Serve", serveIDs, runServe},
	{"Beam", beamIDs, runBeam},
}

// add records a row, unless -only excludes it.
func (b *bench) add(r Row) {
	if !b.cfg.wants(r.ID) {
		return
	}
	if r.Skip != "" {
		r.Recfs, r.PeerVal = math.NaN(), math.NaN()
		b.logf("  %s: not measured: %s", r.ID, r.Skip)
	} else {
		b.logf("  %s: recfs %s vs %s %s %s (%s)", r.ID, formatFigure(r.Recfs), r.Peer, formatFigure(r.PeerVal), r.Unit.Name, formatRatio(r))
	}
	b.rows = append(b.rows, r)
}

// skipAll records every id as not measured for why.
func (b *bench) skipAll(ids []string, label, peer string, why string) {
	for _, id := range ids {
		b.add(Row{ID: id, Label: label, Peer: peer, Skip: why})
	}
}

// selfCmd is the command that reruns one row of this program.
func (b *bench) selfCmd(id string) string {
	cmd := "cd test && go run ./cmd/recfs-bench -only " + id
	if b.cfg.quick {
		cmd += " -quick"
	}
	if b.cfg.scale != 1 {
		cmd += fmt.Sprintf(" -size-scale %g", b.cfg.scale)
	}
	return cmd
}

// humanBytes prints n as GiB/MiB/KiB.
func humanBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
	default:
		return fmt.Sprintf("%d KiB", n>>10)
	}
}

// humanCount prints n with k/M suffixes when round.
func humanCount(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return groupThousands(fmt.Sprint(n))
}

// mbps is bytes per second in MB/s (10^6).
func mbps(bytes int64, secs float64) float64 { return float64(bytes) / secs / 1e6 }

// readAll reads path sequentially to the end with a 1 MiB buffer.
func catCmd(path string) func() error {
	return func() error {
		return exec.Command("sh", "-c", "cat "+shellQuote(path)+" > /dev/null").Run()
	}
}

// --- 1. Scan ---

func runScan(b *bench) {
	for _, rs := range []int{1 << 10, 64 << 10} {
		if b.ctx.Err() != nil {
			return
		}
		tag := fmt.Sprintf("%dk", rs>>10)
		if !b.cfg.wantsAny([]string{"scan-" + tag + "-pebble", "scan-" + tag + "-goleveldb", "scan-" + tag + "-cat",
			"scan-" + tag + "-grailbio", "scan-" + tag + "-rio-cat"}) {
			continue
		}
		b.scanLeveldb(rs, tag)
		b.scanRecordIO(rs, tag)
	}
}

// scanLeveldb measures index build vs pebble, goleveldb and cat on a
// leveldb log of rs-byte records.
func (b *bench) scanLeveldb(rs int, tag string) {
	ids := []string{"scan-" + tag + "-pebble", "scan-" + tag + "-goleveldb", "scan-" + tag + "-cat"}
	if !b.cfg.wantsAny(ids) {
		return
	}
	n := int(b.cfg.scanBytes / int64(rs+7))
	path := filepath.Join(b.cfg.work, "scan", fmt.Sprintf("leveldb-%s.log", tag))
	defer os.Remove(path)
	b.logf("  writing %s: %d records of %d bytes (goleveldb journal writer)", path, n, rs)
	if err := writeLeveldb(path, n, rs); err != nil {
		b.skipAll(ids, "scan", "", err.Error())
		return
	}
	size := fileSize(path)
	_ = catCmd(path)() // page cache warm: every reader sees the same cache
	recfs := indexScan(b.ctx, path, n, "records")
	pebble := drainLog(path, n, "pebble", func(f io.Reader) func() (io.Reader, error) {
		return record.NewReader(f, 0).Next
	})
	goleveldb := drainLog(path, n, "goleveldb", func(f io.Reader) func() (io.Reader, error) {
		return journal.NewReader(f, nil, true, true).Next
	})
	ts, err := b.timeFuncs(b.cfg.runs, recfs, pebble, goleveldb, catCmd(path))
	label := fmt.Sprintf("scan a %s leveldb log of %s-byte records (%s records)", humanBytes(size), humanCount(rs), humanCount(n))
	if err != nil {
		b.skipAll(ids, label, "", err.Error())
		return
	}
	peers := []string{"pebble record.Reader", "goleveldb journal.Reader", "`cat file > /dev/null`"}
	for i, id := range ids {
		b.add(Row{ID: id, Section: "Scan", Label: label + ": recfs index build", Unit: UnitMBps,
			Recfs: mbps(size, ts[0].Median), Peer: peers[i], PeerVal: mbps(size, ts[i+1].Median), Limit: i == 2,
			Cmd: b.selfCmd(id), Detail: spread(ts[0], ts[i+1])})
	}
}

// scanRecordIO measures index build vs grailbio's Scanner and cat on a
// recordio file of rs-byte items.
func (b *bench) scanRecordIO(rs int, tag string) {
	ids := []string{"scan-" + tag + "-grailbio", "scan-" + tag + "-rio-cat"}
	if !b.cfg.wantsAny(ids) {
		return
	}
	n := int(b.cfg.scanBytes / int64(rs))
	path := filepath.Join(b.cfg.work, "scan", fmt.Sprintf("recordio-%s.rio", tag))
	defer os.Remove(path)
	b.logf("  writing %s: %d items of %d bytes (grailbio recordio writer)", path, n, rs)
	if err := writeRecordIO(path, n, rs); err != nil {
		b.skipAll(ids, "scan", "", err.Error())
		return
	}
	size := fileSize(path)
	_ = catCmd(path)()
	recfs := indexScan(b.ctx, path, n, "items")
	grail := func() error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := recordio.NewScanner(f, recordio.ScannerOpts{})
		k := 0
		for sc.Scan() {
			_ = sc.Get()
			k++
		}
		if err := sc.Finish(); err != nil {
			return err
		}
		if k != n {
			return fmt.Errorf("grailbio: %d items, want %d", k, n)
		}
		return nil
	}
	ts, err := b.timeFuncs(b.cfg.runs, recfs, grail, catCmd(path))
	label := fmt.Sprintf("scan a %s grailbio recordio file of %s-byte items (%s items)", humanBytes(size), humanCount(rs), humanCount(n))
	if err != nil {
		b.skipAll(ids, label, "", err.Error())
		return
	}
	peers := []string{"grailbio recordio.Scanner", "`cat file > /dev/null`"}
	for i, id := range ids {
		b.add(Row{ID: id, Section: "Scan", Label: label + ": recfs index build", Unit: UnitMBps,
			Recfs: mbps(size, ts[0].Median), Peer: peers[i], PeerVal: mbps(size, ts[i+1].Median), Limit: i == 1,
			Cmd: b.selfCmd(id), Detail: spread(ts[0], ts[i+1])})
	}
}

// --- 2. Open ---

// smallLog returns (writing it once) a leveldb log of n 100-byte records,
// used by the open and memory rows.
func (b *bench) smallLog(n int) (string, error) {
	path := filepath.Join(b.cfg.work, "small", fmt.Sprintf("records-%d.log", n))
	if fileSize(path) > 0 {
		return path, nil
	}
	b.logf("  writing %s: %d records of 100 bytes", path, n)
	return path, writeLeveldb(path, n, 100)
}

// recfsKind describes a recfs mount of src at mnt.
func (b *bench) recfsKind(backend, src, mnt, cacheDir string, extra ...string) fsKind {
	args := append([]string{b.cfg.bin, "mount", "--daemon", "--backend", backend, "--cache-dir", cacheDir}, extra...)
	args = append(args, src, mnt)
	return fsKind{Name: "recfs " + backend, Dir: mnt, src: src, mount: shellJoin(args...),
		unmount: shellJoin(b.cfg.bin, "unmount", mnt)}
}

func runOpen(b *bench) {
	ids := []string{"open-cold", "open-warm"}
	n := b.cfg.openRecords
	log, err := b.smallLog(n)
	if err != nil {
		b.skipAll(ids, "open", "", err.Error())
		return
	}
	mnt := filepath.Join(b.cfg.work, "mnt", "open")
	cache := filepath.Join(b.cfg.work, "open-cache")
	os.MkdirAll(mnt, 0o755)
	k := b.recfsKind("gofuse", log, mnt, cache)
	b.mounts.track(k)
	unmount := k.unmount + " 2>/dev/null || true"
	drop := "true"
	coldWhat := "no saved index, page cache dropped"
	if b.dropOK {
		drop = dropCachesCmd
	} else {
		coldWhat = "no saved index; " + b.dropWhy
	}
	first := k.mount + " && ls " + shellQuote(mnt)
	label := fmt.Sprintf("mount + first `ls` of a %s-record log (%s)", humanCount(n), humanBytes(fileSize(log)))
	// Cold: no saved index, and (when allowed) nothing in the page cache,
	// beside cat of the source from a cold cache: reading the file once is
	// the least any first open must do.
	if b.cfg.wants("open-cold") {
		ts, cmd, err := b.timeJobs([]job{
			{cmd: first, prepare: unmount + "; rm -rf " + shellQuote(cache) + "; " + drop},
			{cmd: "cat " + shellQuote(log), prepare: drop},
		}, timeOpts{runs: b.cfg.runs, shell: true})
		if err != nil {
			b.add(Row{ID: "open-cold", Label: label, Peer: "cat of the source", Skip: err.Error()})
		} else {
			b.add(Row{ID: "open-cold", Section: "Open", Label: label + ", cold: " + coldWhat, Unit: UnitSeconds,
				Recfs: ts[0].Median, Peer: "`cat` of the source, cold", PeerVal: ts[1].Median, Limit: true, Cmd: cmd,
				Detail: spread(ts...)})
		}
	}
	// Warm: the saved index exists and the page cache holds the source;
	// beside ls of the same directory once it is mounted (the listing alone).
	if b.cfg.wants("open-warm") {
		_, _ = b.sh(unmount + "; " + first) // saves the index
		b.mounts.down(mnt)
		b.mounts.track(k)
		ts, cmd, err := b.timeJobs([]job{{cmd: first, prepare: unmount + "; cat " + shellQuote(log) + " > /dev/null"}}, timeOpts{runs: b.cfg.runs, warmup: 1, shell: true})
		if err == nil {
			var ts2 []timing
			var cmd2 string
			ts2, cmd2, err = b.timeJobs([]job{{cmd: "ls " + shellQuote(mnt)}}, timeOpts{runs: b.cfg.runs, warmup: 1})
			if err == nil {
				ts = append(ts, ts2...)
				cmd += " ; " + cmd2
			}
		}
		if err != nil {
			b.add(Row{ID: "open-warm", Label: label, Peer: "ls of the mounted directory", Skip: err.Error()})
		} else {
			b.add(Row{ID: "open-warm", Section: "Open", Label: label + ", warm: saved index, page cache warm", Unit: UnitSeconds,
				Recfs: ts[0].Median, Peer: "`ls` of the already-mounted directory", PeerVal: ts[1].Median, Limit: true,
				Cmd: cmd, Detail: spread(ts...)})
		}
	}
	b.mounts.down(mnt)
}

// track remembers k as mounted (or about to be, by a timed command), so
// cleanup unmounts it.
func (m *mounts) track(k fsKind) {
	m.mu.Lock()
	m.active[k.Dir] = k.unmount
	m.mu.Unlock()
}

// --- 3. Mount ---

func runMount(b *bench) {
	n := b.cfg.mountRecords
	const rs = 1024
	dir := filepath.Join(b.cfg.work, "mount")
	log := filepath.Join(dir, "records.log")
	files := filepath.Join(b.cfg.shm, "files")
	img := filepath.Join(dir, "records.sqfs")
	zipPath := filepath.Join(dir, "records.zip")
	cache := filepath.Join(dir, "cache")
	b.logf("  writing %d records of %d bytes: leveldb log, files on tmpfs, squashfs image, zip", n, rs)
	if err := writeLeveldb(log, n, rs); err != nil {
		b.skipAll([]string{"mount"}, "mount", "", err.Error())
		return
	}
	if err := writeFiles(files, n, rs); err != nil {
		b.skipAll([]string{"mount"}, "mount", "", err.Error())
		return
	}
	defer os.RemoveAll(files)
	scale := fmt.Sprintf("%s × %s records", humanCount(n), humanBytes(rs))

	var kinds []fsKind
	skipKind := map[string]string{}
	for _, be := range strings.Split(b.cfg.backends, ",") {
		be = strings.TrimSpace(be)
		k := b.recfsKind(be, log, filepath.Join(b.cfg.work, "mnt", "recfs-"+be), cache)
		if err := b.mounts.up(k); err != nil {
			skipKind[k.Name] = "mount failed: " + err.Error()
			continue
		}
		kinds = append(kinds, k)
	}
	if len(kinds) == 0 {
		b.skipAll([]string{"mount"}, "mount "+scale, "", "no recfs backend mounts: "+skipKind["recfs gofuse"])
		return
	}
	peers := []fsKind{{Name: "tmpfs", Dir: files}}
	// -no-duplicates: with every record of one size, mksquashfs's search
	// for duplicate files grew quadratic (minutes at 100k records).
	if b.cfg.noSquashfs {
		skipKind["squashfuse"] = "left out (-no-squashfuse)"
	} else if why := toolMissing("mksquashfs") + toolMissing("squashfuse"); why != "" {
		skipKind["squashfuse"] = why
	} else if _, err := b.sh(shellJoin("mksquashfs", files, img, "-noappend", "-quiet", "-noI", "-noD", "-noF", "-noX", "-no-duplicates", "-no-xattrs")); err != nil {
		skipKind["squashfuse"] = "mksquashfs: " + err.Error()
	} else {
		mnt := filepath.Join(b.cfg.work, "mnt", "squashfuse")
		peers = append(peers, fsKind{Name: "squashfuse", Dir: mnt, src: img, mount: shellJoin("squashfuse", img, mnt),
			unmount: shellJoin("fusermount3", "-u", mnt)})
	}
	b.logf("  data written")
	if !b.cfg.fuseZip {
		// fuse-zip is opt-in (-fuse-zip): it is not among the issue's
		// peers, and it alone took minutes at 100k records.
	} else if why := toolMissing("fuse-zip"); why != "" {
		skipKind["fuse-zip"] = why
	} else if err := writeZip(zipPath, n, rs); err != nil {
		skipKind["fuse-zip"] = "zip: " + err.Error()
	} else {
		mnt := filepath.Join(b.cfg.work, "mnt", "fuse-zip")
		peers = append(peers, fsKind{Name: "fuse-zip", Dir: mnt, src: zipPath, mount: shellJoin("fuse-zip", "-r", zipPath, mnt),
			unmount: shellJoin("fusermount3", "-u", mnt)})
	}
	var live []fsKind
	for _, p := range peers {
		if err := b.mounts.up(p); err != nil {
			skipKind[p.Name] = "mount failed: " + err.Error()
			continue
		}
		live = append(live, p)
	}
	all := append(append([]fsKind{}, kinds...), live...)

	type op struct {
		id, what string
		cmd      func(dir string) string
		cold     bool
	}
	grep := func(d string) string { return "grep -r " + needle + " " + shellQuote(d) }
	ops := []op{
		{"mount-ls", "`ls -l`", func(d string) string { return "ls -l " + shellQuote(d) }, false},
		{"mount-grep-first", "first `grep -r` after mount (remounted before each run, source in the page cache)", grep, true},
		{"mount-grep-warm", "`grep -r` warm", grep, false},
		{"mount-cat", "`cat` of every record", func(d string) string {
			return "find " + shellQuote(d) + " -type f -exec cat {} +"
		}, false},
	}
	warmed := false
	for _, o := range ops {
		if b.ctx.Err() != nil {
			return
		}
		if !b.cfg.wants(o.id) {
			continue
		}
		var jobs []job
		for _, k := range all {
			j := job{cmd: o.cmd(k.Dir)}
			switch {
			case o.cold && k.mount != "":
				j.prepare = b.remount(k, false)
			case k.mount != "":
				// Warm means right after a pass: the same command once,
				// untimed, just before the timed run. Without it a FUSE
				// mount waits a round (squashfuse's grep -r alone takes
				// 30 s or more) and DAMON may page its cache out (see
				// damonPageout), while tmpfs cannot lose its pages.
				j.prepare = o.cmd(k.Dir) + " > /dev/null"
			}
			jobs = append(jobs, j)
		}
		// A first-pass grep that just ran over every kind leaves them all
		// warm: the warm rows after it need no extra warm-up round.
		warm := 1
		if warmed && !o.cold {
			warm = 0
		}
		b.logf("  %s: %d rounds over %d file systems", o.id, warm+b.cfg.runs, len(jobs))
		drops := cacheDrops()
		ts, secs, cmd, err := b.timeRounds(jobs, timeOpts{runs: b.cfg.runs, warmup: warm, pipe: strings.HasPrefix(o.id, "mount-grep")})
		dropped := ""
		if d := cacheDrops() - drops; drops >= 0 && d > 0 {
			dropped = fmt.Sprintf("; **caches dropped %d times by another process during these runs** (/proc/vmstat): the kernel forgot every inode, so warm figures are not warm", d)
			b.logf("  %s: caches were dropped %d times meanwhile", o.id, d)
		}
		warmed = err == nil && strings.HasPrefix(o.id, "mount-grep")
		for ki, k := range kinds {
			for _, p := range peers {
				id := fmt.Sprintf("%s-%s-%s", o.id, strings.TrimPrefix(k.Name, "recfs "), p.Name)
				row := Row{ID: id, Section: "Mount", Label: fmt.Sprintf("%s over %s, recfs %s", o.what, scale, strings.TrimPrefix(k.Name, "recfs ")),
					Unit: UnitSeconds, Peer: p.Name, Limit: p.Name == "tmpfs", Cmd: cmd}
				li := indexOf(all, p.Name)
				switch {
				case err != nil:
					row.Skip = err.Error()
				case skipKind[p.Name] != "":
					row.Skip = skipKind[p.Name]
				case li < 0:
					row.Skip = "peer not mounted"
				default:
					row.Recfs, row.PeerVal = ts[ki].Median, ts[li].Median
					row.PairRatio = pairRatio(secs[ki], secs[li])
					row.Detail = spread(ts[ki], ts[li]) + "; ratio: median of the runs' ratios" + dropped
				}
				if p.Name == "tmpfs" && o.cold {
					row.Peer = "tmpfs (no mount: its caches stay)"
				}
				b.add(row)
			}
		}
	}
	for name, why := range skipKind {
		if strings.HasPrefix(name, "recfs ") {
			b.add(Row{ID: "mount-" + strings.TrimPrefix(name, "recfs "), Section: "Mount",
				Label: "every mount row with " + name, Peer: "all", Skip: why})
		}
	}
	// RSS of each FUSE server after ls -l and grep -r from a fresh mount.
	if b.cfg.wants("mount-rss") && b.ctx.Err() == nil {
		rss := map[string]float64{}
		rssErr := map[string]string{}
		for _, k := range all {
			if k.mount == "" {
				continue
			}
			cmd := b.remount(k, false) + "; ls -l " + shellQuote(k.Dir) + " > /dev/null; " + grep(k.Dir) + " | cat > /dev/null"
			if _, err := b.sh(cmd); err != nil {
				rssErr[k.Name] = err.Error()
				continue
			}
			pid, err := serverPID(k.Dir)
			if err == nil {
				rss[k.Name], err = rssMiB(pid)
			}
			if err != nil {
				rssErr[k.Name] = err.Error()
			}
		}
		for _, k := range kinds {
			for _, p := range peers {
				if p.mount == "" && skipKind[p.Name] == "" {
					continue // tmpfs has no server
				}
				be := strings.TrimPrefix(k.Name, "recfs ")
				row := Row{ID: "mount-rss-" + be + "-" + p.Name, Section: "Mount",
					Label: fmt.Sprintf("FUSE server RSS after `ls -l` + `grep -r` of %s from a fresh mount, recfs %s", scale, be),
					Unit:  UnitMiB, Peer: p.Name, Cmd: b.selfCmd("mount-rss")}
				switch {
				case skipKind[p.Name] != "":
					row.Skip = skipKind[p.Name]
				case rssErr[k.Name] != "":
					row.Skip = rssErr[k.Name]
				case rssErr[p.Name] != "":
					row.Skip = rssErr[p.Name]
				default:
					row.Recfs, row.PeerVal = rss[k.Name], rss[p.Name]
				}
				b.add(row)
			}
		}
	}
}

// indexOf returns the position of the kind named name in ks, or -1.
func indexOf(ks []fsKind, name string) int {
	for i, k := range ks {
		if k.Name == name {
			return i
		}
	}
	return -1
}

// --- 4. Big record ---

func runBig(b *bench) {
	size := b.cfg.bigRecord
	log := filepath.Join(b.cfg.work, "big", "big.log")
	b.logf("  writing %s: one record of %s", log, humanBytes(size))
	label := fmt.Sprintf("sequential read of one %s record", humanBytes(size))
	if err := writeLeveldbBig(log, size); err != nil {
		b.add(Row{ID: "big-read", Label: label, Skip: err.Error()})
		return
	}
	defer os.Remove(log)
	mnt := filepath.Join(b.cfg.work, "mnt", "big")
	k := b.recfsKind("gofuse", log, mnt, filepath.Join(b.cfg.work, "big", "cache"))
	if err := b.mounts.up(k); err != nil {
		b.add(Row{ID: "big-read", Label: label, Peer: "cat of the source", Skip: err.Error()})
		return
	}
	defer b.mounts.down(mnt)
	rec := filepath.Join(mnt, recordName(0, 1))
	ts, cmd, err := b.timeJobs([]job{{cmd: "cat " + shellQuote(rec)}, {cmd: "cat " + shellQuote(log)}},
		timeOpts{runs: b.cfg.runs, warmup: 1})
	row := Row{ID: "big-read", Section: "Big record", Label: label + " through the mount (recfs gofuse), page cache warm",
		Unit: UnitMBps, Peer: "`cat` of the source file", Limit: true, Cmd: cmd}
	if err != nil {
		row.Skip = err.Error()
	} else {
		row.Recfs, row.PeerVal = mbps(size, ts[0].Median), mbps(fileSize(log), ts[1].Median)
		row.Detail = spread(ts...)
	}
	b.add(row)
}

// --- 5. Memory ---

func runMemory(b *bench) {
	if b.cfg.wants("mem-bytes-per-record") {
		b.memBytesPerRecord()
	}
	if b.cfg.wants("mem-rss") && b.ctx.Err() == nil {
		b.memRSS()
	}
}

// heapDelta returns how many heap bytes stay allocated after build, with
// keep holding what build returned until the measurement is over.
func heapDelta(build func() (any, error)) (int64, error) {
	// Several collections: objects with finalizers and sync.Pool contents
	// survive the first one.
	settle := func(ms *runtime.MemStats) {
		for range 3 {
			runtime.GC()
		}
		runtime.ReadMemStats(ms)
	}
	var before, after runtime.MemStats
	settle(&before)
	v, err := build()
	if err != nil {
		return 0, err
	}
	settle(&after)
	runtime.KeepAlive(v)
	return int64(after.HeapAlloc) - int64(before.HeapAlloc), nil
}

// memBytesPerRecord measures the heap an index of memRecords small records
// keeps, beside the obvious Go index a user would write: a slice of
// {offset, length int64} appended while pebble's reader scans the log.
func (b *bench) memBytesPerRecord() {
	n := b.cfg.memRecords
	label := fmt.Sprintf("index heap bytes per record, %s records of 10 bytes", humanCount(n))
	path := filepath.Join(b.cfg.work, "mem", "records.log")
	b.logf("  writing %s: %d records of 10 bytes", path, n)
	if err := writeLeveldb(path, n, 10); err != nil {
		b.add(Row{ID: "mem-bytes-per-record", Label: label, Skip: err.Error()})
		return
	}
	defer os.Remove(path)
	var got int64
	recfs, err := heapDelta(func() (any, error) {
		t, err := index.Open(context.Background(), path, index.Options{CacheDir: "-"})
		if err == nil {
			got = t.Len()
		}
		return t, err
	})
	if err == nil && got != int64(n) {
		err = fmt.Errorf("recfs index: %d records, want %d", got, n)
	}
	type loc struct{ off, n int64 }
	var peer int64
	if err == nil {
		peer, err = heapDelta(func() (any, error) {
			f, err := os.Open(path)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			r := record.NewReader(f, 0)
			var locs []loc
			var off int64
			for {
				rr, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					return nil, err
				}
				k, err := io.Copy(io.Discard, rr)
				if err != nil {
					return nil, err
				}
				locs = append(locs, loc{off, k})
				off += k
			}
			if len(locs) != n {
				return nil, fmt.Errorf("pebble: %d records, want %d", len(locs), n)
			}
			return locs, nil
		})
	}
	row := Row{ID: "mem-bytes-per-record", Section: "Memory", Label: label, Unit: UnitBPR,
		Peer: "`[]struct{off, len int64}` appended during a pebble scan", Cmd: b.selfCmd("mem-bytes-per-record")}
	if err != nil {
		row.Skip = err.Error()
	} else {
		row.Recfs, row.PeerVal = float64(recfs)/float64(n), float64(peer)/float64(n)
	}
	b.add(row)
}

// memRSS measures the recfs server's RSS after ls -l and grep -r over the
// openRecords log, beside the size of the log (what keeping the records in
// memory would cost).
func (b *bench) memRSS() {
	n := b.cfg.openRecords
	label := fmt.Sprintf("recfs gofuse server RSS after `ls -l` + `grep -r` of %s records of 100 bytes", humanCount(n))
	row := Row{ID: "mem-rss", Section: "Memory", Label: label, Unit: UnitMiB,
		Peer: "size of the source log (holding the records in memory)", Limit: true, Cmd: b.selfCmd("mem-rss")}
	log, err := b.smallLog(n)
	if err != nil {
		row.Skip = err.Error()
		b.add(row)
		return
	}
	mnt := filepath.Join(b.cfg.work, "mnt", "rss")
	k := b.recfsKind("gofuse", log, mnt, filepath.Join(b.cfg.work, "rss-cache"))
	if err := b.mounts.up(k); err != nil {
		row.Skip = err.Error()
		b.add(row)
		return
	}
	defer b.mounts.down(mnt)
	cmd := "ls -l " + shellQuote(mnt) + " > /dev/null; grep -r " + needle + " " + shellQuote(mnt) + " | cat > /dev/null"
	row.Cmd = cmd + "; grep VmRSS /proc/$(pgrep -f " + shellQuote("recfs mount.*"+mnt) + ")/status"
	if _, err := b.sh(cmd); err != nil {
		row.Skip = err.Error()
		b.add(row)
		return
	}
	pid, err := serverPID(mnt)
	var rss float64
	if err == nil {
		rss, err = rssMiB(pid)
	}
	if err != nil {
		row.Skip = err.Error()
	} else {
		row.Recfs, row.PeerVal = rss, float64(fileSize(log))/(1<<20)
	}
	b.add(row)
}

// --- 6. Append ---

func runAppend(b *bench) {
	n := b.cfg.appendRecords
	dir := filepath.Join(b.cfg.work, "append")
	lines := filepath.Join(dir, "input.txt")
	recs, err := writeLines(lines, n, 100)
	if err != nil {
		b.skipAll([]string{"append-cli", "append-mount-gofuse", "append-mount-bazil"}, "append", "", err.Error())
		return
	}
	pebblePath := filepath.Join(dir, "pebble.log")
	pebble := func() error {
		f, err := os.Create(pebblePath)
		if err != nil {
			return err
		}
		w := record.NewLogWriter(f, 1, record.LogWriterConfig{
			WriteWALSyncOffsets: func() bool { return false },
			QueueSemChan:        make(chan struct{}, 64),
		})
		for _, r := range recs {
			if _, err := w.WriteRecord(r); err != nil {
				return err
			}
		}
		return w.Close() // flushes, fsyncs and closes f
	}
	if b.cfg.wants("append-cli") {
		target := filepath.Join(dir, "recfs.log")
		argv := []string{b.cfg.bin, "append", "--create", "leveldb", "--sync", "--lines", target}
		cmd := "rm -f " + shellQuote(target) + "; " + shellJoin(argv...) + " < " + shellQuote(lines)
		// The timed run is what cmd does, without the shell and rm processes
		// (the harness's, not recfs's): remove the target in-process, then
		// start recfs itself with stdin opened from the lines file.
		cli := func() error {
			if err := os.Remove(target); err != nil && !os.IsNotExist(err) {
				return err
			}
			_, err := b.run(lines, argv...)
			return err
		}
		ts, err := b.timeFuncs(b.cfg.runs, cli, pebble)
		row := Row{ID: "append-cli", Section: "Append",
			Label: fmt.Sprintf("append %s records of 99 bytes in one `recfs append --lines --sync` (one fsync)", humanCount(n)),
			Unit:  UnitRecPS, Peer: "pebble record.LogWriter, same records, Close (one fsync)", Cmd: cmd + "   # and " + b.selfCmd("append-cli")}
		if err != nil {
			row.Skip = err.Error()
		} else {
			row.Recfs, row.PeerVal = float64(n)/ts[0].Median, float64(n)/ts[1].Median
			row.Detail = spread(ts...)
		}
		b.add(row)
	}
	if b.cfg.wants("append-mount") && b.ctx.Err() == nil {
		b.appendMount(recs, pebble)
	}
}

// rwSupported reports whether recfs mount takes --rw, and why not.
func (b *bench) rwSupported() (bool, string) {
	out, err := exec.Command(b.cfg.bin, "mount", "--help").CombinedOutput()
	if err != nil {
		return false, "recfs mount --help: " + err.Error()
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "--rw") {
			if strings.Contains(l, "not yet supported") {
				return false, "--rw not available (recfs mount --help: not yet supported)"
			}
			return true, ""
		}
	}
	return false, "--rw not available"
}

// appendMount creates one file per record in a --rw mount of each backend
// (one record appended at each close), beside pebble's LogWriter; the log
// is read back with pebble's reader after unmounting.
func (b *bench) appendMount(recs [][]byte, pebble func() error) {
	// Creating files through FUSE is slow per record: cap the count so the
	// row stays within its time budget.
	n := min(len(recs), 2000)
	for _, be := range strings.Split(b.cfg.backends, ",") {
		be = strings.TrimSpace(be)
		if b.ctx.Err() != nil {
			return
		}
		row := Row{ID: "append-mount-" + be, Section: "Append",
			Label: fmt.Sprintf("append %s records of 99 bytes through a `--rw` mount (recfs %s), one file created and closed per record", humanCount(n), be),
			Unit:  UnitRecPS, Peer: fmt.Sprintf("pebble record.LogWriter, %s records, Close (one fsync)", humanCount(len(recs))),
			Cmd: b.selfCmd("append-mount-" + be)}
		if ok, why := b.rwSupported(); !ok {
			row.Skip = why
			b.add(row)
			continue
		}
		if err := b.appendMountOne(be, recs, n, pebble, &row); err != nil {
			row.Skip = err.Error()
		}
		b.add(row)
	}
}

// appendMountOne measures one backend for appendMount, filling row.
func (b *bench) appendMountOne(be string, recs [][]byte, n int, pebble func() error, row *Row) error {
	dir := filepath.Join(b.cfg.work, "append")
	target := filepath.Join(dir, "mount-"+be+".log")
	mnt := filepath.Join(b.cfg.work, "mnt", "append-"+be)
	os.Remove(target)
	if _, err := b.sh(shellJoin(b.cfg.bin, "append", "--create", "leveldb", target) + " < /dev/null"); err != nil {
		return err
	}
	base, err := countPebble(target) // append with no input may write one empty record
	if err != nil {
		return err
	}
	k := b.recfsKind(be, target, mnt, filepath.Join(dir, "cache"), "--rw")
	if err := b.mounts.up(k); err != nil {
		return err
	}
	round := 0
	viaMount := func() error {
		for i, r := range recs[:n] {
			name := filepath.Join(mnt, fmt.Sprintf("new-%d-%d", round, i))
			if err := os.WriteFile(name, r, 0o644); err != nil {
				return err
			}
		}
		round++
		return nil
	}
	ts, err := b.timeFuncs(b.cfg.runs, viaMount, pebble)
	b.mounts.down(mnt)
	if err != nil {
		return err
	}
	// Every created file must be a record of the log, read by pebble.
	got, err := countPebble(target)
	if err != nil {
		return err
	}
	if want := base + round*n; got != want {
		return fmt.Errorf("pebble reads %d records from the log after %d creates through the mount", got, want)
	}
	row.Recfs, row.PeerVal = float64(n)/ts[0].Median, float64(len(recs))/ts[1].Median
	row.Detail = spread(ts...)
	row.Cmd = fmt.Sprintf("%s; then %d × `echo RECORD > %s/NEW-NAME` (in-process os.WriteFile)   # or %s",
		k.mount, n, mnt, b.selfCmd(row.ID))
	return nil
}

// countPebble counts the records pebble's reader finds in a leveldb log.
func countPebble(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r := record.NewReader(f, 0)
	k := 0
	for ; ; k++ {
		rr, err := r.Next()
		if err == io.EOF {
			return k, nil
		}
		if err != nil {
			return k, err
		}
		if _, err := io.Copy(io.Discard, rr); err != nil {
			return k, err
		}
	}
}

// indexScan returns the recfs side of a scan row: build the index of path
// (no saved table) and check that it holds n records ("records" or "items"
// in the message).
func indexScan(ctx context.Context, path string, n int, noun string) func() error {
	return func() error {
		t, err := index.Open(ctx, path, index.Options{CacheDir: "-"})
		if err != nil {
			return err
		}
		defer t.Close()
		if t.Len() != int64(n) {
			return fmt.Errorf("recfs index: %d %s, want %d (damage: %v)", t.Len(), noun, n, t.Damage())
		}
		return nil
	}
}

// drainLog returns a peer side of a scan row: open path, take every record
// from the reader that open builds (its Next method), copy each to
// io.Discard, and check that there are n of them.
func drainLog(path string, n int, name string, open func(io.Reader) func() (io.Reader, error)) func() error {
	return func() error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		next := open(f)
		k := 0
		for ; ; k++ {
			r, err := next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			if _, err := io.Copy(io.Discard, r); err != nil {
				return err
			}
		}
		if k != n {
			return fmt.Errorf("%s: %d records, want %d", name, k, n)
		}
		return nil
	}
}
