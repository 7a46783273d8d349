package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/recfs/recfs/test/internal/franzwalk"
)

// The Kafka rows measure recfs on Kafka log segments against franz-go,
// the reference client: the index build of a segment (uncompressed and
// zstd) beside franz-go's decoder walking the same batches (checksum,
// decompression and every record, as its consumer does); cat --decode
// kafka beside the same fields printed from franz-go's decoding; and a
// first and a warm grep -r of a mounted 100k-record segment beside tmpfs
// files of the same values.

// kafkaIDs are the rows of the Kafka section (the grep rows get the
// backend in their ID).
var kafkaIDs = []string{"kafka-scan-none", "kafka-scan-zstd", "kafka-cat-decode", "kafka-grep-first", "kafka-grep-warm"}

// kafkaRecordsPerBatch is the batch size the segments are written with
// (a producer's linger-filled batch).
const kafkaRecordsPerBatch = 200

var castagnoliTable = crc32.MakeTable(crc32.Castagnoli)

// writeKafka writes a segment of n records of recSize-byte values (keys
// "user-N", a header on every tenth) in batches compressed with codec c,
// with franz-go's kmsg types and kgo's compressors (the reference
// writer), and returns the values' total size.
func writeKafka(path string, n, recSize int, c kgo.CompressionCodec) (int64, error) {
	w, done, err := createBuffered(path)
	if err != nil {
		return 0, err
	}
	comp, err := kgo.DefaultCompressor(c)
	if err != nil {
		return 0, err
	}
	var total int64
	val := make([]byte, recSize)
	var recs, batch []byte
	var buf bytes.Buffer
	for base := 0; base < n; base += kafkaRecordsPerBatch {
		recs = recs[:0]
		k := min(kafkaRecordsPerBatch, n-base)
		for i := range k {
			off := base + i
			fillRecord(val, off)
			kr := kmsg.Record{OffsetDelta: int32(i), TimestampDelta64: int64(i), Key: fmt.Appendf(nil, "user-%d", off), Value: val}
			if off%10 == 0 {
				kr.Headers = []kmsg.Header{{Key: "trace-id", Value: fmt.Appendf(nil, "tr-%d", off)}}
			}
			kr.Length = int32(len(kr.AppendTo(nil)) - 1)
			recs = kr.AppendTo(recs)
			total += int64(recSize)
		}
		body, attr := recs, int16(0)
		if comp != nil {
			out, typ := comp.Compress(&buf, recs)
			body, attr = out, int16(typ)
		}
		rb := kmsg.RecordBatch{FirstOffset: int64(base), Length: int32(49 + len(body)), PartitionLeaderEpoch: 1, Magic: 2,
			Attributes: attr, LastOffsetDelta: int32(k - 1), FirstTimestamp: 1700000000000 + int64(base), MaxTimestamp: 1700000000000 + int64(base+k-1),
			ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, NumRecords: int32(k), Records: body}
		batch = rb.AppendTo(batch[:0])
		binary.BigEndian.PutUint32(batch[17:], crc32.Checksum(batch[21:], castagnoliTable))
		if _, err := w.Write(batch); err != nil {
			return 0, err
		}
	}
	return total, done()
}

// franzWalk reads the segment at path as franz-go's consumer does (see
// franzWalkBytes); each record goes to fn (nil: dropped).
func franzWalk(path string, n int, fn func(rb *kmsg.RecordBatch, r *kmsg.Record)) error {
	seg, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return franzWalkBytes(seg, n, fn)
}

// franzWalkBytes walks the segment seg as franz-go's consumer does (see
// franzwalk.Walk); each record goes to fn (nil: dropped). It checks that
// there are n records.
func franzWalkBytes(seg []byte, n int, fn func(rb *kmsg.RecordBatch, r *kmsg.Record)) error {
	k, err := franzwalk.Walk(seg, fn)
	if err != nil {
		return err
	}
	if k != n {
		return fmt.Errorf("franz-go: %d records, want %d", k, n)
	}
	return nil
}

// franzScan returns the peer side of a scan row: read the segment at path
// into buf (allocated once by the caller, so that no run pays for fresh
// heap pages or leaves a segment's worth of garbage to the next) and walk
// it with franzWalkBytes.
func franzScan(path string, n int, buf []byte) func() error {
	return func() error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		m, err := io.ReadFull(f, buf)
		if err != nil {
			return err
		}
		return franzWalkBytes(buf[:m], n, nil)
	}
}

func runKafka(b *bench) {
	b.kafkaScan()
	b.kafkaCatDecode()
	b.kafkaGrep()
}

// kafkaScanRuns is the least number of timed rounds of a scan row: its
// runs are short (a tenth of a second), so many rounds cost little, and
// the median of their ratios, what the row reports, then moves less with
// the one or two rounds that another process or the host slowed (recfs
// builds on every core, so a round in which one is taken counts against
// it more than against the one-core peer).
const kafkaScanRuns = 15

// kafkaScan measures the index build of a segment of 1 KiB values
// (a quarter of the scan size in values, so 256 MiB and more in a full
// run), uncompressed and zstd, beside franz-go's walk.
//
// Both sides read the same tmpfs file (no disk, nothing the page cache can
// drop between runs: a segment written to disk just before was read back
// from the disk by whichever side ran first after writeback, up to 25×
// slower than the other runs), both check every batch's CRC-32C and parse
// every record, and each round runs both after a garbage collection, one
// then the other. The row's ratio is the median of the rounds' ratios.
func (b *bench) kafkaScan() {
	for _, c := range []struct {
		id    string
		codec kgo.CompressionCodec
	}{{"kafka-scan-none", kgo.NoCompression()}, {"kafka-scan-zstd", kgo.ZstdCompression()}} {
		if !b.cfg.wants(c.id) || b.ctx.Err() != nil {
			continue
		}
		b.kafkaScanRow(c.id, c.codec)
	}
}

// kafkaScanRow measures one scan row.
func (b *bench) kafkaScanRow(id string, codec kgo.CompressionCodec) {
	const rs = 1024
	n := int(b.cfg.scanBytes / 4 / rs)
	path := filepath.Join(b.cfg.shm, id+".log")
	defer os.Remove(path)
	b.logf("  writing %s: %d records of %d bytes (franz-go kmsg)", path, n, rs)
	values, err := writeKafka(path, n, rs, codec)
	label := fmt.Sprintf("scan a Kafka segment of %s records of %s-byte values (%s, %s of values)", humanCount(n), humanCount(rs), strings.TrimPrefix(id, "kafka-scan-"), humanBytes(values))
	if err != nil {
		b.skipAll([]string{id}, label, "", err.Error())
		return
	}
	size := fileSize(path)
	buf := make([]byte, size)
	secs, err := b.funcRounds(max(b.cfg.runs, kafkaScanRuns), indexScan(b.ctx, path, n, "records"), franzScan(path, n, buf))
	if err != nil {
		b.skipAll([]string{id}, label, "", err.Error())
		return
	}
	t0, t1 := summarizeSecs(secs[0]), summarizeSecs(secs[1])
	b.add(Row{ID: id, Section: "Kafka", Label: label + ": recfs index build", Unit: UnitMBps,
		Recfs: mbps(size, t0.Median), Peer: "franz-go kmsg + kgo decompressor", PeerVal: mbps(size, t1.Median),
		PairRatio: pairRatio(secs[0], secs[1]), Cmd: b.selfCmd(id),
		Detail: fmt.Sprintf("%s file on tmpfs, read by both; both check every batch's CRC-32C; recfs builds in parallel parts, franz-go walks on one core; target ≥ 2×; ratio: median of the rounds' ratios; %s",
			humanBytes(size), spread(t0, t1))})
}

// kafkaCatDecode measures `recfs cat --decode kafka` of a 100k-record zstd
// segment beside franz-go's decoding printing the same fields.
func (b *bench) kafkaCatDecode() {
	const id = "kafka-cat-decode"
	if !b.cfg.wants(id) || b.ctx.Err() != nil {
		return
	}
	n := b.cfg.mountRecords
	path := filepath.Join(b.cfg.work, "kafka", "decode.log")
	defer os.Remove(path)
	label := fmt.Sprintf("`recfs cat --decode kafka` of a zstd segment of %s records of 200-byte values", humanCount(n))
	if _, err := writeKafka(path, n, 200, kgo.ZstdCompression()); err != nil {
		b.skipAll([]string{id}, label, "", err.Error())
		return
	}
	_ = catCmd(path)()
	recfs := func() error {
		c := exec.CommandContext(b.ctx, b.cfg.bin, "cat", "--decode", "kafka", "--no-cache", path)
		c.Stdout = io.Discard
		return c.Run()
	}
	franz := func() error {
		w := bufio.NewWriterSize(io.Discard, 64<<10)
		var line []byte
		err := franzWalk(path, n, func(rb *kmsg.RecordBatch, r *kmsg.Record) {
			line = fmt.Appendf(line[:0], "offset=%d\ttime=%s\tkey=%s", rb.FirstOffset+int64(r.OffsetDelta),
				time.UnixMilli(rb.FirstTimestamp+r.TimestampDelta64).UTC().Format("2006-01-02T15:04:05.000Z07:00"), r.Key)
			for _, h := range r.Headers {
				line = fmt.Appendf(line, "\theader.%s=%s", h.Key, h.Value)
			}
			line = append(append(append(line, "\tvalue="...), r.Value...), '\n')
			w.Write(line)
		})
		w.Flush()
		return err
	}
	ts, err := b.timeFuncs(b.cfg.runs, recfs, franz)
	if err != nil {
		b.skipAll([]string{id}, label, "", err.Error())
		return
	}
	b.add(Row{ID: id, Section: "Kafka", Label: label, Unit: UnitSeconds, Recfs: ts[0].Median,
		Peer: "franz-go decoding, the same fields printed (in process, unescaped)", PeerVal: ts[1].Median,
		Cmd: b.selfCmd(id), Detail: spread(ts[0], ts[1])})
}

// kafkaGrep measures a first and a warm grep -r of a mounted segment of
// 100k records of 1 KiB values (every hundredth holding the needle)
// beside tmpfs files of the same values.
func (b *bench) kafkaGrep() {
	ids := []string{"kafka-grep-first", "kafka-grep-warm"}
	var want []string
	for _, be := range strings.Split(b.cfg.backends, ",") {
		want = append(want, ids[0]+"-"+strings.TrimSpace(be), ids[1]+"-"+strings.TrimSpace(be))
	}
	if !b.cfg.wantsAny(want) || b.ctx.Err() != nil {
		return
	}
	n := b.cfg.mountRecords
	const rs = 1024
	dir := filepath.Join(b.cfg.work, "kafka")
	seg := filepath.Join(dir, "00000000000000000000.log")
	files := filepath.Join(b.cfg.shm, "kafka-files")
	scale := fmt.Sprintf("a %s-record segment of %s values (zstd)", humanCount(n), humanBytes(rs))
	if _, err := writeKafka(seg, n, rs, kgo.ZstdCompression()); err != nil {
		b.skipAll(ids, scale, "", err.Error())
		return
	}
	defer os.Remove(seg)
	if err := writeFiles(files, n, rs); err != nil {
		b.skipAll(ids, scale, "", err.Error())
		return
	}
	defer os.RemoveAll(files)
	grep := func(d string) string { return "grep -r " + needle + " " + shellQuote(d) }
	for _, be := range strings.Split(b.cfg.backends, ",") {
		be = strings.TrimSpace(be)
		k := b.recfsKind(be, seg, filepath.Join(b.cfg.work, "mnt", "kafka-"+be), filepath.Join(dir, "cache"))
		if err := b.mounts.up(k); err != nil {
			b.skipAll([]string{ids[0] + "-" + be, ids[1] + "-" + be}, scale, "tmpfs", "mount failed: "+err.Error())
			continue
		}
		for _, o := range []struct {
			id   string
			cold bool
		}{{ids[0], true}, {ids[1], false}} {
			if !b.cfg.wants(o.id + "-" + be) {
				continue
			}
			j := job{cmd: grep(k.Dir), prepare: grep(k.Dir) + " > /dev/null"}
			what := "`grep -r` warm"
			if o.cold {
				j.prepare, what = b.remount(k, false), "first `grep -r` after mount (remounted before each run, segment in the page cache)"
			}
			ts, secs, cmd, err := b.timeRounds([]job{j, {cmd: grep(files)}}, timeOpts{runs: b.cfg.runs, warmup: 1, pipe: true})
			row := Row{ID: o.id + "-" + be, Section: "Kafka", Label: fmt.Sprintf("%s over %s, recfs %s", what, scale, be),
				Unit: UnitSeconds, Peer: "tmpfs files of the values", Limit: true, Cmd: cmd}
			if err != nil {
				row.Skip = err.Error()
			} else {
				row.Recfs, row.PeerVal = ts[0].Median, ts[1].Median
				row.PairRatio = pairRatio(secs[0], secs[1])
				row.Detail = spread(ts[0], ts[1]) + "; ratio: median of the runs' ratios"
			}
			b.add(row)
		}
		b.mounts.down(k.Dir)
	}
}
