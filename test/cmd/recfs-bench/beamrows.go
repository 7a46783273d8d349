package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// The Beam rows time `recfs-beam count` (the beam module's example: every
// record of a glob read through recfsio.Read on the in-process prism
// runner) over 8 TFRecord shards beside `recfs cat` of the same shards
// piped into `wc -c`, both with the shards' saved indexes. Prism runs up
// to 8 bundles at once and has no worker-count setting; the rows give the
// process 1 and then 2 cores with GOMAXPROCS, which is what bounds its
// workers here. On a 2-core machine the rows show Beam's overhead, not
// scaling.

// beamIDs are the rows of the section.
var beamIDs = []string{"beam-count-1", "beam-count-2"}

// beamShards is how many files the rows read.
const beamShards = 8

func runBeam(b *bench) {
	total := int64(1 << 30)
	if b.cfg.quick {
		total = 64 << 20
	}
	total = int64(float64(total) * b.cfg.scale)
	per := int(max(total/beamShards/(gzRecordSize+16), 100))
	src, err := filepath.Abs("../beam")
	if err == nil {
		_, err = os.Stat(filepath.Join(src, "go.mod"))
	}
	if err != nil {
		b.skipAll(beamIDs, "Beam", "", "no beam module beside the test module: "+err.Error())
		return
	}
	dir := filepath.Join(b.cfg.work, "beam")
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "recfs-beam")
	b.logf("  building recfs-beam (the first build compiles the Beam SDK: minutes)")
	build := exec.CommandContext(b.ctx, "go", "build", "-o", bin, "./cmd/recfs-beam")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		b.skipAll(beamIDs, "Beam", "", fmt.Sprintf("go build recfs-beam: %v: %s", err, errorLine(string(out))))
		return
	}
	cache := filepath.Join(dir, "cache")
	var shards []string
	b.logf("  writing %d shards of %d records of %s", beamShards, per, humanBytes(gzRecordSize))
	for i := range beamShards {
		p := filepath.Join(dir, fmt.Sprintf("part-%02d.tfrecord", i))
		if err := writeTFRecord(p, per, gzRecordSize); err != nil {
			b.skipAll(beamIDs, "Beam", "", err.Error())
			return
		}
		shards = append(shards, p)
	}
	payload := int64(beamShards * per * gzRecordSize)
	cat := shellJoin(append([]string{b.cfg.bin, "cat", "--cache-dir", cache}, shards...)...) + " | wc -c"
	glob := filepath.Join(dir, "part-*.tfrecord")
	count := func(procs int) string {
		return fmt.Sprintf("GOMAXPROCS=%d ", procs) + shellJoin(bin, "--cache-dir", cache, "count", glob)
	}
	// Index the shards, and check once that both sides read every byte.
	if err := b.beamCheck(count(2), cat, shards, cache, payload); err != nil {
		b.skipAll(beamIDs, "Beam", "", err.Error())
		return
	}
	scale := fmt.Sprintf("%d TFRecord shards, %s of payload (%d records of %s)", beamShards, humanBytes(payload), beamShards*per, humanBytes(gzRecordSize))
	for k, id := range beamIDs {
		procs := k + 1
		if b.ctx.Err() != nil || !b.cfg.wants(id) {
			continue
		}
		row := Row{ID: id, Section: "Beam", Unit: UnitSeconds,
			Label: fmt.Sprintf("`recfs-beam count` of %s on prism, GOMAXPROCS=%d, saved indexes", scale, procs),
			Peer:  "`recfs cat FILES | wc -c` (one process, all cores)", Limit: true}
		ts, secs, cmd, err := b.timeRounds([]job{{cmd: count(procs)}, {cmd: cat}}, timeOpts{runs: b.cfg.runs, warmup: 1, shell: true})
		row.Cmd = cmd
		if err != nil {
			row.Skip = err.Error()
		} else {
			row.Recfs, row.PeerVal, row.PairRatio = ts[0].Median, ts[1].Median, pairRatio(secs[0], secs[1])
			row.Detail = spread(ts...) + "; ratio: median of the runs' ratios (below 1: Beam slower than cat)"
		}
		b.add(row)
	}
}

// beamCheck indexes the shards into cache, then runs count and cat once
// and fails unless both read payload bytes.
func (b *bench) beamCheck(count, cat string, shards []string, cache string, payload int64) error {
	if _, err := b.sh(shellJoin(append([]string{b.cfg.bin, "index", "--cache-dir", cache}, shards...)...)); err != nil {
		return err
	}
	out, err := b.sh(count + " 2>/dev/null")
	if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var sum struct{ Records, Bytes int64 }
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil {
		return fmt.Errorf("recfs-beam count: summary %q: %v", lines[len(lines)-1], err)
	}
	if sum.Bytes != payload {
		return fmt.Errorf("recfs-beam count read %d bytes, want %d", sum.Bytes, payload)
	}
	out, err = b.sh(cat)
	if err != nil {
		return err
	}
	if n, err := strconv.ParseInt(strings.TrimSpace(out), 10, 64); err != nil || n != payload {
		return fmt.Errorf("%s: %q, want %d bytes", cat, out, payload)
	}
	return nil
}
