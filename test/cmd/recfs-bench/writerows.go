package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// --- Writes: created-and-closed files through a --rw mount ---

// writeIDs are the rows of the Writes section.
var writeIDs = []string{"write-create-gofuse", "write-create-bazil", "write-8-writers-gofuse", "write-8-writers-sync-gofuse"}

// createCount is how many files of 99 bytes a write row creates per run.
const createCount = 2000

// runWrites measures files created and closed in a --rw mount (one
// record appended per close) beside the same files created on the file
// system that holds the source, and 8 concurrent writers beside one, with
// and without an fsync of each file before its close.
func runWrites(b *bench) {
	if !b.cfg.wantsAny(writeIDs) {
		return
	}
	dir := filepath.Join(b.cfg.work, "writes")
	recs, err := writeLines(filepath.Join(dir, "input.txt"), createCount, 100)
	if err != nil {
		b.skipAll(writeIDs, "writes", "", err.Error())
		return
	}
	for _, be := range strings.Split(b.cfg.backends, ",") {
		be = strings.TrimSpace(be)
		if b.ctx.Err() != nil {
			return
		}
		if b.cfg.wants("write-create-" + be) {
			b.writeCreate(be, dir, recs)
		}
		if be == "gofuse" && b.cfg.wants("write-8-writers-gofuse") {
			b.writeConcurrent(be, dir, recs, 8, false)
		}
		if be == "gofuse" && b.cfg.wants("write-8-writers-sync-gofuse") {
			b.writeConcurrent(be, dir, recs, 8, true)
		}
	}
}

// createFiles creates one file per record in dir (names new-TAG-I), split
// among writers goroutines, each file written and closed in one
// os.WriteFile as `echo RECORD > NAME` would, or (durable) written,
// fsynced and closed as a database's durable write does.
func createFiles(dir, tag string, recs [][]byte, writers int, durable bool) error {
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(recs); i += writers {
				if err := createFile(filepath.Join(dir, fmt.Sprintf("new-%s-%d", tag, i)), recs[i], durable); err != nil {
					errs[w] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// createFile writes data to the new file path and closes it, fsync'ing
// it before the close when durable is set.
func createFile(path string, data []byte, durable bool) error {
	if !durable {
		return os.WriteFile(path, data, 0o644)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeMount makes an empty leveldb log in dir and mounts it --rw with
// backend be for row; it returns the log, the mount point, the records
// the log starts with and what unmounts it, or false with row.Skip set.
func (b *bench) writeMount(be, dir, name string, row *Row) (log, mnt string, base int, down func(), ok bool) {
	if ok, why := b.rwSupported(); !ok {
		row.Skip = why
		return "", "", 0, nil, false
	}
	log = filepath.Join(dir, name+".log")
	os.Remove(log)
	if _, err := b.sh(shellJoin(b.cfg.bin, "append", "--create", "leveldb", log) + " < /dev/null"); err != nil {
		row.Skip = err.Error()
		return "", "", 0, nil, false
	}
	base, err := countPebble(log)
	if err != nil {
		row.Skip = err.Error()
		return "", "", 0, nil, false
	}
	mnt = filepath.Join(b.cfg.work, "mnt", name)
	k := b.recfsKind(be, log, mnt, filepath.Join(dir, "cache"), "--rw")
	if err := b.mounts.up(k); err != nil {
		row.Skip = err.Error()
		return "", "", 0, nil, false
	}
	return log, mnt, base, func() { b.mounts.down(mnt) }, true
}

// finish fills row from timings ts of n files (recfs first, then the
// peer), after checking that the log holds want records.
func finish(row *Row, ts []timing, err error, log string, want, n int) {
	if err == nil {
		err = checkLog(log, want)
	}
	if err != nil {
		row.Skip = err.Error()
		return
	}
	row.Recfs, row.PeerVal = float64(n)/ts[0].Median, float64(n)/ts[1].Median
	row.Detail = spread(ts...)
}

// checkLog checks that pebble's reader finds want records in log.
func checkLog(log string, want int) error {
	got, err := countPebble(log)
	if err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("pebble reads %d records from %s, want %d", got, log, want)
	}
	return nil
}

// writeCreate: files created and closed in a --rw mount of backend be
// against the same files created in a directory beside the source log.
func (b *bench) writeCreate(be, dir string, recs [][]byte) {
	n := len(recs)
	row := Row{ID: "write-create-" + be, Section: "Writes",
		Label: fmt.Sprintf("%s files of 99 bytes created and closed through a `--rw` mount (recfs %s), one record appended per close", humanCount(n), be),
		Unit:  UnitRecPS, Peer: "the same files created on the source's own file system", Cmd: b.selfCmd("write-create-" + be)}
	defer func() { b.add(row) }()
	log, mnt, base, down, ok := b.writeMount(be, dir, "create-"+be, &row)
	if !ok {
		return
	}
	plain := filepath.Join(dir, "plain-"+be)
	round, plainRound := 0, 0
	viaMount := func() error {
		round++
		return createFiles(mnt, fmt.Sprint(round), recs, 1, false)
	}
	onDisk := func() error {
		plainRound++
		d := filepath.Join(plain, fmt.Sprint(plainRound))
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		return createFiles(d, "", recs, 1, false)
	}
	ts, err := b.timeFuncs(b.cfg.runs, viaMount, onDisk)
	down()
	os.RemoveAll(plain)
	finish(&row, ts, err, log, base+round*n, n)
}

// writeConcurrent: writers goroutines creating files through one --rw
// mount against one doing the same; the peer figure is one writer's rate.
// With durable each file is fsynced before its close, so the writers' fsyncs
// can share the source's syncs (group commit).
func (b *bench) writeConcurrent(be, dir string, recs [][]byte, writers int, durable bool) {
	n := len(recs)
	id, how, name := fmt.Sprintf("write-%d-writers-%s", writers, be), "created and closed", "concurrent-"+be
	peer := "one writer creating the same files through the same mount"
	if durable {
		id = fmt.Sprintf("write-%d-writers-sync-%s", writers, be)
		how, name = "created, fsynced and closed", "concurrent-sync-"+be
		peer = "one writer creating and fsyncing the same files through the same mount"
	}
	row := Row{ID: id, Section: "Writes",
		Label: fmt.Sprintf("%s files of 99 bytes %s through one `--rw` mount (recfs %s) by %d concurrent writers", humanCount(n), how, be, writers),
		Unit:  UnitRecPS, Peer: peer, Cmd: b.selfCmd(id)}
	defer func() { b.add(row) }()
	log, mnt, base, down, ok := b.writeMount(be, dir, name, &row)
	if !ok {
		return
	}
	round := 0
	with := func(k int) func() error {
		return func() error {
			round++
			return createFiles(mnt, fmt.Sprint(round), recs, k, durable)
		}
	}
	ts, err := b.timeFuncs(b.cfg.runs, with(writers), with(1))
	down()
	finish(&row, ts, err, log, base+round*n, n)
}
