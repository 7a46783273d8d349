package main

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// The compressed TFRecord rows: a whole-file GZIP shard (gzip -6, as
// TensorFlow's and Beam's writers leave them) indexed beside one
// decompression of it (gzip -dc, and Go's compress/gzip in-process), its
// saved checkpoints beside what indexed_gzip's design would keep, reads of
// single records with the saved index beside the same records of the
// uncompressed shard, and a first grep -r of the mounted shard beside zcat
// piped into grep.

// gzIDs are the rows of the section.
var gzIDs = []string{"gz-index-gzip", "gz-index-go", "gz-index-size", "gz-cat-first", "gz-cat-last", "gz-cat-shuffled", "gz-grep-first"}

// Targets of the issue, checked in the rows' details.
const (
	gzIndexTarget    = 1.2  // index build within 1.2× one decompression
	gzShuffledTarget = 3.0  // 200 shuffled reads within 3× the uncompressed shard's
	gzSizeTarget     = 0.03 // checkpoints within 3% of the compressed file
)

// gzRecordSize is the payload of each record: text, as tf.Example protos
// of tokens and ids are.
const gzRecordSize = 8 << 10

func runGzip(b *bench) {
	plainBytes := int64(600 << 20) // about 220 MB once gzipped
	if b.cfg.quick {
		plainBytes = 48 << 20
	}
	plainBytes = int64(float64(plainBytes) * b.cfg.scale)
	n := int(max(plainBytes/(gzRecordSize+16), 300))
	if why := toolMissing("gzip"); why != "" {
		b.skipAll(gzIDs, "compressed TFRecord", "", why)
		return
	}
	dir := filepath.Join(b.cfg.work, "gz")
	plain := filepath.Join(dir, "shard.tfrecord")
	z := plain + ".gz"
	b.logf("  writing %s: %d records of %s, then gzip -6", plain, n, humanBytes(gzRecordSize))
	if err := writeTFRecord(plain, n, gzRecordSize); err != nil {
		b.skipAll(gzIDs, "compressed TFRecord", "", err.Error())
		return
	}
	if _, err := b.sh("gzip -6 -c " + shellQuote(plain) + " > " + shellQuote(z)); err != nil {
		b.skipAll(gzIDs, "compressed TFRecord", "", err.Error())
		return
	}
	if !b.cfg.keep {
		defer os.RemoveAll(dir)
	}
	scale := fmt.Sprintf("a %s gzip shard (%s, %d records of %s)", humanBytes(fileSize(z)), humanBytes(fileSize(plain)), n, humanBytes(gzRecordSize))
	cache, plainCache := filepath.Join(dir, "cache"), filepath.Join(dir, "cache-plain")
	index := shellJoin(b.cfg.bin, "index", "--rebuild", "--cache-dir", cache, z)
	b.gzIndex(index, z, scale)
	if _, err := b.sh(shellJoin(b.cfg.bin, "index", "--cache-dir", plainCache, plain)); err != nil {
		b.skipAll(gzIDs[2:], "compressed TFRecord", "", err.Error())
		return
	}
	if _, err := b.sh(index); err != nil {
		b.skipAll(gzIDs[2:], "compressed TFRecord", "", err.Error())
		return
	}
	b.gzIndexSize(cache, plainCache, z, plain, scale)
	rng := rand.New(rand.NewPCG(7, 7))
	var shuffled []string
	for _, i := range rng.Perm(n)[:min(200, n)] {
		shuffled = append(shuffled, strconv.Itoa(i))
	}
	for _, c := range []struct {
		id, what string
		sel      []string
	}{
		{"gz-cat-first", "`recfs cat` of record 0", []string{"0"}},
		{"gz-cat-last", "`recfs cat` of the last record", []string{"last:1"}},
		{"gz-cat-shuffled", fmt.Sprintf("`recfs cat` of %d records in shuffled order (one command)", len(shuffled)), shuffled},
	} {
		if b.ctx.Err() != nil || !b.cfg.wants(c.id) {
			continue
		}
		gzCmd := shellJoin(append([]string{b.cfg.bin, "cat", "--cache-dir", cache, z}, c.sel...)...)
		plainCmd := shellJoin(append([]string{b.cfg.bin, "cat", "--cache-dir", plainCache, plain}, c.sel...)...)
		b.gzPair(Row{ID: c.id, Label: c.what + " of " + scale + ", saved index, from a fresh process",
			Peer: "the same of the uncompressed shard"}, job{cmd: gzCmd}, job{cmd: plainCmd}, timeOpts{runs: max(b.cfg.runs, 5), warmup: 1})
	}
	if b.ctx.Err() == nil && b.cfg.wants("gz-grep-first") {
		mnt := filepath.Join(b.cfg.work, "mnt", "gz")
		k := b.recfsKind("gofuse", z, mnt, cache)
		if err := b.mounts.up(k); err != nil {
			b.add(Row{ID: "gz-grep-first", Section: "Compressed TFRecord", Label: "first `grep -r` of the mounted shard", Skip: err.Error()})
			return
		}
		defer b.mounts.down(mnt)
		grep := job{cmd: "grep -r " + needle + " " + shellQuote(mnt), prepare: b.remount(k, false)}
		zgrep := job{cmd: "sh -c " + shellQuote("gzip -dc "+shellQuote(z)+" | grep -a -c "+needle), prepare: "cat " + shellQuote(z) + " > /dev/null"}
		b.gzPair(Row{ID: "gz-grep-first", Label: "first `grep -r " + needle + "` of " + scale + " mounted (recfs gofuse, saved index, remounted before each run)",
			Peer: "`gzip -dc | grep -c`"}, grep, zgrep, timeOpts{runs: b.cfg.runs, warmup: 1, pipe: true})
	}
}

// gzIndex measures the index build against gzip -dc and Go's inflater.
func (b *bench) gzIndex(index, z, scale string) {
	label := "index build (`recfs index --rebuild`) of " + scale
	if b.cfg.wants("gz-index-gzip") {
		b.gzPair(Row{ID: "gz-index-gzip", Label: label, Peer: "`gzip -dc`"},
			job{cmd: index}, job{cmd: "gzip -dc " + shellQuote(z)}, timeOpts{runs: b.cfg.runs, warmup: 1})
	}
	if b.ctx.Err() != nil || !b.cfg.wants("gz-index-go") {
		return
	}
	row := Row{ID: "gz-index-go", Section: "Compressed TFRecord", Label: label, Unit: UnitSeconds,
		Peer: "Go's `compress/gzip` to `io.Discard` (in-process)", Cmd: index + " ; " + b.selfCmd("gz-index-go")}
	secs, err := b.funcRounds(b.cfg.runs, func() error {
		_, err := b.sh(index)
		return err
	}, func() error { return goGunzip(z) })
	if err != nil {
		row.Skip = err.Error()
	} else {
		t0, t1 := summarizeSecs(secs[0]), summarizeSecs(secs[1])
		row.Recfs, row.PeerVal, row.PairRatio = t0.Median, t1.Median, pairRatio(secs[0], secs[1])
		row.Detail = spread(t0, t1) + gzTarget(row.PairRatio, 1/gzIndexTarget, "target: within 1.2× of one decompression")
	}
	b.add(row)
}

// gzPair times two commands in alternation and adds the row.
func (b *bench) gzPair(row Row, recfs, peer job, o timeOpts) {
	row.Section, row.Unit = "Compressed TFRecord", UnitSeconds
	ts, secs, cmd, err := b.timeRounds([]job{recfs, peer}, o)
	row.Cmd = cmd
	if err != nil {
		row.Skip = err.Error()
		b.add(row)
		return
	}
	row.Recfs, row.PeerVal, row.PairRatio = ts[0].Median, ts[1].Median, pairRatio(secs[0], secs[1])
	row.Detail = spread(ts...) + "; ratio: median of the runs' ratios"
	switch row.ID {
	case "gz-index-gzip":
		row.Detail += gzTarget(row.PairRatio, 1/gzIndexTarget, "target: within 1.2× of `gzip -dc`")
	case "gz-cat-shuffled":
		row.Detail += gzTarget(row.PairRatio, 1/gzShuffledTarget, "target: within 3× of the uncompressed shard")
	}
	b.add(row)
}

// gzTarget says whether a ratio (recfs ahead above 1) meets its floor.
func gzTarget(ratio, floor float64, what string) string {
	if ratio >= floor {
		return "; " + what + ": met"
	}
	return "; **" + what + ": missed**"
}

// gzIndexSize compares the bytes the checkpoints add to the saved index
// with what indexed_gzip's design keeps for the same stream: a 32 KiB
// window, uncompressed, per 1 MiB of decompressed data.
func (b *bench) gzIndexSize(cache, plainCache, z, plain, scale string) {
	if !b.cfg.wants("gz-index-size") {
		return
	}
	row := Row{ID: "gz-index-size", Section: "Compressed TFRecord", Label: "checkpoints in the saved index of " + scale,
		Unit: UnitMiB, Peer: "indexed_gzip's design (32 KiB window per MiB, computed)", Cmd: b.selfCmd("gz-index-size")}
	withCP, errA := dirBytes(cache)
	without, errB := dirBytes(plainCache)
	if errA != nil || errB != nil {
		row.Skip = fmt.Sprint(errA, errB)
		b.add(row)
		return
	}
	cp := withCP - without // the same records; the difference is the checkpoints
	points := (fileSize(plain) + 1<<20 - 1) >> 20
	row.Recfs, row.PeerVal = float64(cp)/(1<<20), float64(points*(32<<10+16))/(1<<20)
	share := float64(cp) / float64(fileSize(z))
	row.Detail = fmt.Sprintf("%.2f%% of the compressed file", 100*share)
	if share <= gzSizeTarget {
		row.Detail += "; target: within 3%: met"
	} else {
		row.Detail += "; **target: within 3%: missed**"
	}
	b.add(row)
}

// dirBytes returns the bytes of the regular files in dir.
func dirBytes(dir string) (int64, error) {
	es, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, e := range es {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
	}
	return n, nil
}

// goGunzip decompresses path with Go's compress/gzip to io.Discard.
func goGunzip(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(bufio.NewReaderSize(f, 256<<10))
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, zr)
	return err
}

// fillGzRecord fills dst with record i of the compressed rows: the mount
// rows' text with pseudo-random digits strewn through it (ids and counts,
// as tf.Example protos of tokens hold), so that gzip -6 compresses it
// about 2.8-fold rather than the tenfold of the word text alone.
func fillGzRecord(dst []byte, i int) {
	fillRecord(dst, i)
	r := rand.New(rand.NewPCG(uint64(i), 9))
	for j := len(needle) + 1; j < len(dst); j += 5 + r.IntN(4) {
		dst[j] = '0' + byte(r.IntN(10))
	}
}

// writeTFRecord writes n records of size bytes (fillGzRecord; every 100th
// holds the needle) as a TFRecord file, framed here rather than by recfs's own
// writer: length, masked CRC-32C of the length, data, masked CRC-32C of
// the data.
func writeTFRecord(path string, n, size int) error {
	w, done, err := createBuffered(path)
	if err != nil {
		return err
	}
	tab := crc32.MakeTable(crc32.Castagnoli)
	mask := func(c uint32) uint32 { return (c>>15 | c<<17) + 0xa282ead8 }
	buf := make([]byte, size)
	var h [12]byte
	var f [4]byte
	for i := range n {
		fillGzRecord(buf, i)
		binary.LittleEndian.PutUint64(h[:8], uint64(size))
		binary.LittleEndian.PutUint32(h[8:], mask(crc32.Checksum(h[:8], tab)))
		binary.LittleEndian.PutUint32(f[:], mask(crc32.Checksum(buf, tab)))
		w.Write(h[:])
		w.Write(buf)
		if _, err := w.Write(f[:]); err != nil {
			done()
			return err
		}
	}
	return done()
}
