package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/syndtr/goleveldb/leveldb/journal"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/recfs/recfs/codec/tfrecord"
	"github.com/recfs/recfs/test/internal/tfexamplepb"
)

// decodeIDs are the rows of the Decode section.
var decodeIDs = []string{"decode-grep-example", "decode-cat-example", "decode-batch-ldb"}

// --- Decode ---

func runDecode(b *bench) {
	n := b.cfg.mountRecords
	dir := filepath.Join(b.cfg.work, "decode")
	shard := filepath.Join(dir, "train.tfrecord")
	if b.cfg.wantsAny([]string{"decode-grep-example", "decode-cat-example"}) {
		b.logf("  writing %d Examples (generated Go types)", n)
		if err := writeExamples(shard, n); err != nil {
			b.skipAll(decodeIDs[:2], "decode", "", err.Error())
		} else {
			b.decodeGrep(shard, n)
			b.decodeCat(shard, n)
		}
	}
	if b.cfg.wants("decode-batch-ldb") && b.ctx.Err() == nil {
		b.decodeBatch(filepath.Join(dir, "000042.log"), n)
	}
}

// example returns Example i: an int64 label, a name, four weights and
// a 64-byte blob, as an image dataset's records look.
func example(rng *rand.Rand, i int) *tfexamplepb.Example {
	blob := make([]byte, 64)
	rng.Read(blob)
	w := []float32{rng.Float32(), rng.Float32(), rng.Float32(), rng.Float32()}
	return &tfexamplepb.Example{Features: &tfexamplepb.Features{Feature: map[string]*tfexamplepb.Feature{
		"label":  {Kind: &tfexamplepb.Feature_Int64List{Int64List: &tfexamplepb.Int64List{Value: []int64{int64(i % 10)}}}},
		"name":   {Kind: &tfexamplepb.Feature_BytesList{BytesList: &tfexamplepb.BytesList{Value: [][]byte{[]byte(fmt.Sprintf("image-%07d.jpg", i))}}}},
		"weight": {Kind: &tfexamplepb.Feature_FloatList{FloatList: &tfexamplepb.FloatList{Value: w}}},
		"blob":   {Kind: &tfexamplepb.Feature_BytesList{BytesList: &tfexamplepb.BytesList{Value: [][]byte{blob}}}},
	}}}
}

// writeExamples writes a TFRecord file of n Examples.
func writeExamples(path string, n int) error {
	w, done, err := createBuffered(path)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewSource(1))
	var rec []byte
	for i := range n {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(example(rng, i))
		if err != nil {
			return err
		}
		rec = tfrecord.AppendRecord(rec[:0], b)
		if _, err := w.Write(rec); err != nil {
			return err
		}
	}
	return done()
}

// decodeGrep: grep -r for a label over a decoded mount of the shard
// beside the same grep over its raw mount (one pass each first).
func (b *bench) decodeGrep(shard string, n int) {
	const id = "decode-grep-example"
	if !b.cfg.wants(id) || b.ctx.Err() != nil {
		return
	}
	cache := filepath.Join(b.cfg.work, "decode", "cache")
	dec := b.recfsKind("gofuse", shard, filepath.Join(b.cfg.work, "mnt", "decoded"), cache, "--decode", "example")
	raw := b.recfsKind("gofuse", shard, filepath.Join(b.cfg.work, "mnt", "raw"), cache)
	label := fmt.Sprintf("`grep -r '\"label\": \\[7\\]'` warm over a mount of %s Examples decoded (`--decode example`)", humanCount(n))
	for _, k := range []fsKind{dec, raw} {
		if err := b.mounts.up(k); err != nil {
			b.add(Row{ID: id, Label: label, Peer: "the raw mount", Skip: "mount: " + err.Error()})
			return
		}
		defer b.mounts.down(k.Dir)
	}
	grep := func(d string) string { return "grep -r '\"label\": \\[7\\]' " + shellQuote(d) }
	// The raw records hold no such line: grep exits 1 there, which the
	// untimed pass must not take for a failure (the timed one pipes).
	jobs := []job{{cmd: grep(dec.Dir), prepare: grep(dec.Dir) + " | cat > /dev/null"}, {cmd: grep(raw.Dir), prepare: grep(raw.Dir) + " | cat > /dev/null"}}
	ts, secs, cmd, err := b.timeRounds(jobs, timeOpts{runs: b.cfg.runs, warmup: 1, pipe: true})
	row := Row{ID: id, Section: "Decode", Label: label, Unit: UnitSeconds, Peer: "the same `grep -r` over the raw mount (`recfs mount`, no --decode)", Cmd: cmd}
	if err != nil {
		row.Skip = err.Error()
	} else {
		row.Recfs, row.PeerVal = ts[0].Median, ts[1].Median
		row.PairRatio = pairRatio(secs[0], secs[1])
		row.Detail = spread(ts...) + "; target: at most 2× the raw pass (ratio ≥ 0.5)"
	}
	b.add(row)
}

// decodeCat: recfs cat --decode example of the shard beside the same
// decode written in Go with generated types and protojson.
func (b *bench) decodeCat(shard string, n int) {
	const id = "decode-cat-example"
	if !b.cfg.wants(id) || b.ctx.Err() != nil {
		return
	}
	label := fmt.Sprintf("`recfs cat --decode example` of %s Examples", humanCount(n))
	recfs := func() error {
		c := exec.CommandContext(b.ctx, b.cfg.bin, "cat", "--decode", "example", shard)
		c.Stdout = io.Discard
		return c.Run()
	}
	peer := func() error { return protojsonExamples(shard, io.Discard) }
	ts, err := b.timeFuncs(b.cfg.runs, recfs, peer)
	row := Row{ID: id, Section: "Decode", Label: label, Unit: UnitSeconds,
		Peer: "Go: the file read whole, `proto.Unmarshal` into generated types, `protojson.Marshal` per record", Cmd: b.selfCmd(id)}
	if err != nil {
		row.Skip = err.Error()
	} else {
		row.Recfs, row.PeerVal = ts[0].Median, ts[1].Median
		row.Detail = spread(ts...) + "; target: at least 2× faster"
	}
	b.add(row)
}

// protojsonExamples writes every Example of the TFRecord file at path as
// protojson, one a line: the peer of decode-cat-example.
func protojsonExamples(path string, w io.Writer) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var ex tfexamplepb.Example
	for off := 0; off < len(data); {
		if len(data)-off < 12 {
			return fmt.Errorf("torn record at %d", off)
		}
		n := int(binary.LittleEndian.Uint64(data[off:]))
		rec := data[off+12 : off+12+n]
		off += 16 + n
		if err := proto.Unmarshal(rec, &ex); err != nil {
			return err
		}
		out, err := protojson.Marshal(&ex)
		if err != nil {
			return err
		}
		if _, err := w.Write(append(out, '\n')); err != nil {
			return err
		}
	}
	return nil
}

// decodeBatch: recfs cat --decode batch of a WAL beside ldb dump_wal
// --print_value.
func (b *bench) decodeBatch(wal string, n int) {
	const id = "decode-batch-ldb"
	label := fmt.Sprintf("`recfs cat --decode batch` of a WAL of %s batches (1-4 puts of 16-byte keys, 100-byte values)", humanCount(n))
	peer := "`ldb dump_wal --print_value` (RocksDB's tool)"
	if why := toolMissing("ldb"); why != "" {
		b.add(Row{ID: id, Label: label, Peer: peer, Skip: why})
		return
	}
	if err := writeBatchWAL(wal, n); err != nil {
		b.add(Row{ID: id, Label: label, Peer: peer, Skip: err.Error()})
		return
	}
	cache := filepath.Join(b.cfg.work, "decode", "cache")
	jobs := []job{
		{cmd: shellJoin(b.cfg.bin, "cat", "--cache-dir", cache, "--decode", "batch", wal)},
		{cmd: shellJoin("ldb", "dump_wal", "--walfile="+wal, "--print_value")},
	}
	ts, cmd, err := b.timeJobs(jobs, timeOpts{runs: b.cfg.runs, warmup: 1})
	row := Row{ID: id, Section: "Decode", Label: label, Unit: UnitSeconds, Peer: peer, Cmd: cmd}
	if err != nil {
		row.Skip = err.Error()
	} else {
		row.Recfs, row.PeerVal = ts[0].Median, ts[1].Median
		row.Detail = spread(ts...) + "; target: at least 5× faster"
	}
	b.add(row)
}

// writeBatchWAL writes a WAL of n WriteBatches of one to four puts with
// goleveldb's journal writer.
func writeBatchWAL(path string, n int) error {
	w, done, err := createBuffered(path)
	if err != nil {
		return err
	}
	jw := journal.NewWriter(w)
	rng := rand.New(rand.NewSource(2))
	val := make([]byte, 100)
	seq := uint64(1)
	var batch []byte
	for i := range n {
		ops := 1 + i%4
		batch = binary.LittleEndian.AppendUint64(batch[:0], seq)
		batch = binary.LittleEndian.AppendUint32(batch, uint32(ops))
		for range ops {
			for j := range val {
				val[j] = 'a' + byte(rng.Intn(26))
			}
			batch = append(batch, 1, 16)
			batch = fmt.Appendf(batch, "user%012d", rng.Intn(1_000_000))
			batch = append(batch, byte(len(val)))
			batch = append(batch, val...)
		}
		seq += uint64(ops)
		rw, err := jw.Next()
		if err != nil {
			return err
		}
		if _, err := rw.Write(batch); err != nil {
			return err
		}
	}
	if err := jw.Close(); err != nil {
		return err
	}
	return done()
}
