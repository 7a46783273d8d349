package main

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// writeDocs writes OUT/BENCHMARKS.md and OUT/benchmarks.png.
func (b *bench) writeDocs(elapsed time.Duration) error {
	if err := os.MkdirAll(b.cfg.out, 0o755); err != nil {
		return err
	}
	var doc bytes.Buffer
	b.renderDoc(&doc, elapsed)
	if err := os.WriteFile(filepath.Join(b.cfg.out, "BENCHMARKS.md"), doc.Bytes(), 0o644); err != nil {
		return err
	}
	return drawChart(b.rows, filepath.Join(b.cfg.out, "benchmarks.png"))
}

// renderDoc writes the Markdown document.
func (b *bench) renderDoc(w *bytes.Buffer, elapsed time.Duration) {
	c := b.cfg
	fmt.Fprintln(w, "# recfs benchmarks")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "recfs beside what a user would otherwise pick (pebble, goleveldb and grailbio readers, squashfuse,")
	fmt.Fprintln(w, "fuse-zip) and beside the machine's limits (`cat` of the source, files on tmpfs), measured pair by pair")
	fmt.Fprintln(w, "in one run. Absolute times drift on a shared machine; the ratios, taken from the same run, hold better.")
	fmt.Fprintln(w, "Every figure below was measured by the run described here; nothing is estimated.")
	fmt.Fprintln(w)
	flags := c.argsUsed
	if flags == "" {
		flags = "(none)"
	}
	fmt.Fprintf(w, "- Produced by: `make bench` → `cd test && go run ./cmd/recfs-bench` with flags `%s`, on %s UTC, in %s.\n",
		flags, time.Now().UTC().Format("2006-01-02 15:04"), elapsed.Round(time.Second))
	fmt.Fprintf(w, "- Machine: %s. Load average (1 / 5 / 15 min) when measuring began: %s; at the end: %s (this run keeps one or two cores busy itself; more than that means other jobs shared the machine).\n",
		machine(), b.loadStart, loadAvg())
	if d := damonPageout(); d != "" {
		fmt.Fprintf(w, "- Memory management: %s. Warm mount rows therefore run each command once, untimed, right before its timed run, and first-pass rows read the source into the page cache before mounting.\n", d)
	}
	fmt.Fprintf(w, "- Sizes: scans %s per file; open and RSS log %s records; mount rows %s records of 1 KiB; big record %s; bytes/record at %s records; append batch %s records.",
		humanBytes(c.scanBytes), humanCount(c.openRecords), humanCount(c.mountRecords), humanBytes(c.bigRecord),
		humanCount(c.memRecords), humanCount(c.appendRecords))
	if sd := c.scaledDown(); len(sd) > 0 {
		fmt.Fprintf(w, " **Sizes that differ from the issue's:** %s.", strings.Join(sd, "; "))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "- Timing: median of %d runs per command (%s); in-process rows run the pair in alternation, round by round.\n",
		c.runs, map[bool]string{true: "hyperfine for shell commands", false: "shell commands timed in-process, hyperfine missing"}[b.hyperfine != ""])
	fmt.Fprintln(w, "- Mount rows: every file system is timed in turn within each round (recfs, tmpfs, squashfuse, recfs, …), in-process through `sh -c`, after one warm-up round; the ratio shown is the median of the round-by-round ratios, the figures the medians of each column. First-pass rows unmount and mount again before each run (kernel caches empty, the source file read into the page cache first); warm rows run the same command once, untimed, right before each timed run of a FUSE mount.")
	fmt.Fprintln(w, "- Mount commands: `bin/recfs` is the lean link, which hands `mount` and `serve` to `recfs-full` beside it (README \"Two binaries\"), so a timed command that mounts (open-cold, open-warm, s3-open-*) includes one lean start, about 15 ms, before `recfs-full` runs.")
	if b.dropOK {
		fmt.Fprintln(w, "- Cold rows: `sync; echo 3 > /proc/sys/vm/drop_caches` and a remount before each run.")
	} else {
		fmt.Fprintf(w, "- Cold rows: remount only; %s.\n", b.dropWhy)
	}
	fmt.Fprintln(w, "- Rerun one row: `make bench BENCHFLAGS='-only ROW-ID'` (IDs in the first column; a prefix such as `mount-grep` or `scan-1k` selects several). The command column is the exact command the figures came from; mounts and data live under `-work` (default `/tmp/recfs-bench`, kept with `-keep`).")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "## Summary")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Ratios are \"recfs vs peer\": above 1 recfs is ahead, below 1 it is behind, whatever the unit.")
	fmt.Fprintln(w, "Rows against a machine limit (`cat` of the source, tmpfs) are expected to be behind: they show the cost over the limit.")
	fmt.Fprintln(w)
	for _, l := range summarize(b.rows) {
		fmt.Fprintln(w, l)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "![recfs vs peer ratios](benchmarks.png)")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "## Results")
	fmt.Fprintln(w)
	writeTable(w, b.rows)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "## What each row does")
	fmt.Fprintln(w)
	for _, l := range methodNotes {
		fmt.Fprintln(w, "- "+l)
	}
}

// methodNotes explain the choices behind the rows.
var methodNotes = []string{
	"Data is generated deterministically: record *i* is text cut from a fixed-seed word pool; every 100th record starts with `needle`, the word `grep -r` searches for (so grep reads every byte and exits 0). leveldb logs are written by goleveldb's journal writer and recordio files by grailbio's writer, not by recfs.",
	"**Scan**: recfs builds its index as a mount does (`index.Open` with no saved table; leveldb logs are scanned in parallel parts on both cores); pebble and goleveldb read every record to `io.Discard` (goleveldb with checksums on); grailbio's Scanner reads every item (the recordio files are written with `MaxItems` set so blocks hold about 16 MiB: grailbio's default of 16384 items a block makes 1 GiB blocks of 64 KiB items, which recfs refuses by default as larger than its 256 MiB decoded-block cap); `cat` reads the file. The page cache is warm. MB/s are of the file's bytes (10^6 bytes/s).",
	"**Open**: `recfs mount --daemon` returns once the mount answers; the time is mount plus the first `ls` (which sorts the names). Cold: the saved index is deleted and the page cache dropped first; warm: the index saved by an earlier mount is loaded.",
	"**Mount**: the same records as a leveldb log (recfs), as files on tmpfs (`/dev/shm`), as an uncompressed squashfs image (`mksquashfs -noI -noD -noF -noX`) served by squashfuse, and as a zip of stored members served by `fuse-zip -r`. Uncompressed images keep the comparison about file-system overhead, not decompression. The log, image and zip are on disk; the cold rows drop the page cache and remount before each run, which cannot make tmpfs cold. `cat` of every record is `find DIR -type f -exec cat {} +`. grep's output goes through a pipe (`hyperfine --output=pipe`): GNU grep stops at the first match when its output is `/dev/null`. RSS rows read `VmRSS` of each FUSE server after `ls -l` and `grep -r` from a fresh mount. Every recfs backend (`--backend gofuse`, `--backend bazil`) is measured beside every peer; one that does not mount is listed as not measured. The warm rows follow the cold grep, which leaves every mount warm.",
	"**Big record**: one record the size of the file, read with `cat` through the mount, beside `cat` of the source log (which also reads the chunk headers).",
	"**Memory**: heap bytes that stay allocated after building an index of tiny records (`runtime.MemStats.HeapAlloc` after GC, before and after), beside a plain Go slice of 16-byte `{offset, length}` entries appended during a pebble scan (its capacity grows by append). RSS is `VmRSS` of the serving process after `ls -l` and `grep -r` over every record from a fresh mount.",
	"Go's own benchmark harness covers the in-process rows too (no FUSE): `cd test && RECFS_BENCH_BYTES=1073741824 go test -run '^$' -bench 'LeveldbScan|RecordIOScan' ./interop/` (recfs's scanners vs the reference readers) and `RECFS_BENCH_BYTES=1073741824 go test -run '^$' -bench 'Build|BytesPerRecord' ./index/` from the repository root (index build vs a plain read; heap per record at 10M). `make microbench` runs them all.",
	"**Append**: records/s of one batch: `recfs append --lines --sync` (a process start, an index of the file, one write and one fsync) beside pebble's `record.LogWriter` writing the same records to a new file and closing it (one fsync). Through the mount (`recfs mount --rw`, each backend): one file written and closed per record (`os.WriteFile`, as `echo RECORD > MNT/NAME` would), each close appending one record; pebble's reader must then find every one of them in the log. The peer figure is pebble's batch rate: a user writing records one by one through a file system is compared with a program writing them in bulk, which is the choice a user actually faces.",
	"**Writes**: files of 99 bytes created and closed one by one (`os.WriteFile`, as `echo RECORD > NAME` does) through a `recfs mount --rw` of an empty leveldb log, each close appending one record, beside the same files created in a directory of the file system that holds the log. The concurrent row splits the same files among 8 goroutines writing through one mount, beside one goroutine. After the runs pebble's reader must find every record in the log.",
	"**Compressed TFRecord**: a TFRecord shard of 8 KiB records (the mount rows' text with pseudo-random digits strewn through it, as protos of tokens and ids are; framed by the bench itself, compressed by `gzip -6` about 2.8 to 1). `gz-index-gzip`: `recfs index --rebuild` (one pass that decompresses, finds the records and makes checkpoints, saved with the index) alternated round by round with `gzip -dc` of the same file to `/dev/null`; `gz-index-go`: the same beside Go's `compress/gzip` decompressing it to `io.Discard` in-process. `gz-index-size`: the bytes the checkpoints add to the saved index (its size minus the saved index of the uncompressed shard, which has the same records) beside what indexed_gzip's design would keep (a 32 KiB uncompressed window per MiB of decompressed data, as ratarmount uses it by default), computed, not run. `gz-cat-*`: `recfs cat` of record 0, of the last record and of 200 records in shuffled order (one command), with the index saved, from a fresh process, beside the same command on the uncompressed shard. `gz-grep-first`: `grep -r needle` over the shard mounted with its saved index, remounted before each run (the source read into the page cache first), beside `gzip -dc | grep -c needle`.",
	"**S3**: a versitygw server (its posix backend under `-work`) on 127.0.0.1, found as the tests find it (`RECFS_VERSITYGW`, `PATH`, `~/.cache/recfs-tools/versitygw-v1.8.0`; the rows are listed as not measured without it). recfs commands reach it through a recording reverse proxy (`--s3-endpoint PROXY --s3-path-style`, credentials in `AWS_*`), which counts each command's HEADs, GETs and body bytes. `s3-index`: `index.OpenSource` over the object in-process (ranged GETs in parallel parts, as a mount builds it) alternated round by round with one plain GET of the whole object to `io.Discard` (the objects' file is in the page cache for both). `s3-index-tbf`, `s3-index-tbf200`: the same pair against a second versitygw run in a network namespace (`ip netns add`, `ip netns exec`) and reached over a veth pair whose namespace end has a `tc qdisc … tbf` (burst 4 ms of the rate, at least 64 KiB; queue 50 ms): 1 Gbit/s with the scan-size object, 200 Mbit/s with an eighth of it (a 1 GiB GET would take 43 s there). On loopback the plain GET runs at about 1.9 GB/s and the server competes with the build for the two cores; behind the limited link both wait on the wire, as across a network. The detail gives the share of the link's rate the plain GET reached (tbf counts whole Ethernet frames, so about 95% is the most a TCP payload gets). Uploads go towards the namespace and are not limited. The rows are not measured without root or iproute2; the namespace and the veth pair are removed on every way out, an interrupt included, and a run first removes those a killed run left. `s3-open-*`: `recfs mount --daemon` + `ls` with the index saved in `--cache-dir`, and with a fresh `--cache-dir` each run and only the sidecar `recfs index --publish` uploaded, beside the same for the local file (saved index, source read into the page cache first), rounds alternated; requests are those of the timed command. `s3-cat-one`: a fresh mount with the saved index, then `cat` of the middle record; its figure is the bytes the store sent, beside the record's size (the reader fetches whole 1 MiB blocks). `s3-grep-warm`: the mount rows' records as a local log and as an object, both mounted, each timed `grep -r` right after an untimed one, rounds alternated.",
	"**Serve**: `recfs serve` of the mount rows' log beside a static file server over the same records as files on tmpfs (this program re-run as a server process: golang.org/x/net/webdav's Handler over `webdav.Dir` for WebDAV, net/http's `FileServer` for HTTP), with the same client, rounds alternated: `rclone copy --transfers 8 --checkers 8` of the whole directory over WebDAV, `wget -q -r -l 1 -np -nH` over HTTP, into tmpfs, the destination emptied before each run. `serve-nfs-grep-warm`: this kernel has no NFS client, so the grep is a Go walk (list the directory, read every record whole, look for the needle) through go-nfs-client against `recfs serve nfs`, beside the same walk over a gofuse mount of the log, after one untimed round. RSS rows read each server's peak `VmHWM` after its row.",
	"**Decode**: a TFRecord shard of Examples (label, name, four float weights, a 64-byte blob; written with Go types protoc-gen-go generated, `test/internal/tfexamplepb`) and a WAL of WriteBatches of one to four puts (goleveldb's journal writer). `decode-grep-example`: `grep -r '\"label\": \\[7\\]'` over the shard mounted with `--decode example` beside the same grep over its raw mount, both on gofuse, each timed right after an untimed pass, rounds alternated. `decode-cat-example`: `recfs cat --decode example` of the shard (a process, its saved index, the rendering) beside a Go function that reads the file whole and runs `proto.Unmarshal` into the generated types and `protojson.Marshal` for every record, rounds alternated. `decode-batch-ldb`: `recfs cat --decode batch` of the WAL beside RocksDB's `ldb dump_wal --print_value` (Debian's rocksdb-tools; not measured without it), both to `/dev/null`.",
	"**Beam**: `recfs-beam count GLOB` (built from `beam/` by the row; the Beam Go SDK on its in-process prism runner, recfsio.Read cutting each shard into 64 MiB ranges) over 8 TFRecord shards of 8 KiB records, beside `recfs cat FILES | wc -c` over the same shards, both with the saved indexes built before timing and checked once to read every payload byte. Prism runs up to 8 bundles at once and has no worker-count setting: the two rows give the process one and then two cores with `GOMAXPROCS`. On this 2-core machine the rows show what Beam costs over one plain reader, not how it scales.",
}

// chartRows returns the rows the chart shows: measured ones, except byte
// counts of requests (s3-cat-one: a 1 MiB block for a 100-byte record is
// a ratio of 1/10000, which would squash every other bar).
func chartRows(rows []Row) []Row {
	var out []Row
	for _, r := range rows {
		if r.measured() && r.Unit != UnitBytes {
			out = append(out, r)
		}
	}
	return out
}

// drawChart draws one horizontal bar per measured row: log2 of the ratio,
// so ahead bars point right, behind bars left, and ×2 and ×½ are the same
// length.
func drawChart(rows []Row, path string) error {
	cr := chartRows(rows)
	p := plot.New()
	p.Title.Text = "recfs vs peer (>1: recfs ahead, <1: behind; log scale)"
	p.X.Label.Text = "ratio"
	if len(cr) == 0 {
		p.Title.Text = "no row was measured"
		return p.Save(20*vg.Centimeter, 8*vg.Centimeter, path)
	}
	ahead := make(plotter.Values, len(cr))
	behind := make(plotter.Values, len(cr))
	names := make([]string, len(cr))
	lo, hi := 0.0, 0.0
	for i, r := range cr {
		// Bars are listed top to bottom in table order: the nominal axis
		// counts from the bottom, so reverse.
		j := len(cr) - 1 - i
		v := math.Log2(r.Ratio())
		if v >= 0 {
			ahead[j] = v
		} else {
			behind[j] = v
		}
		lo, hi = math.Min(lo, v), math.Max(hi, v)
		names[j] = r.ID
	}
	barW := vg.Points(9)
	for _, s := range []struct {
		v plotter.Values
		c color.Color
	}{{ahead, color.RGBA{R: 0x2e, G: 0x8b, B: 0x57, A: 0xff}}, {behind, color.RGBA{R: 0xc0, G: 0x39, B: 0x2b, A: 0xff}}} {
		bc, err := plotter.NewBarChart(s.v, barW)
		if err != nil {
			return err
		}
		bc.Horizontal = true
		bc.Color = s.c
		bc.LineStyle.Width = 0
		p.Add(bc)
	}
	p.NominalY(names...)
	p.Y.Tick.Label.Font.Size = vg.Points(7)
	lo, hi = math.Floor(lo)-0.5, math.Ceil(hi)+0.5
	p.X.Min, p.X.Max = lo, hi
	var ticks plot.ConstantTicks
	// At most about ten labelled ticks, one of them at ×1.
	step := max(1, int(math.Ceil((hi-lo)/10)))
	for e := int(math.Ceil(lo)); float64(e) <= hi; e++ {
		label := ""
		if e%step == 0 {
			label = ratioTick(e)
		}
		ticks = append(ticks, plot.Tick{Value: float64(e), Label: label})
	}
	p.X.Tick.Marker = ticks
	p.Add(plotter.NewGrid())
	h := vg.Length(len(cr))*vg.Points(12) + 3*vg.Centimeter
	return p.Save(22*vg.Centimeter, h, path)
}

// ratioTick labels log2 tick e as a ratio: ×4, ×1, ×1/8.
func ratioTick(e int) string {
	if e >= 0 {
		return fmt.Sprintf("×%d", 1<<e)
	}
	return fmt.Sprintf("×1/%d", 1<<(-e))
}
