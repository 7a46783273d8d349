package interop

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"
)

// kafkaCorpus returns the batches of a segment with everything the v2
// format carries: every codec, null keys and values, headers (with null
// values), a 1 MiB value, log-append time, a transaction with its commit
// marker and an aborted one with its abort marker.
func kafkaCorpus(rng *rand.Rand) []kBatch {
	var out []kBatch
	off, ts := int64(5000), int64(1700000000000)
	add := func(b kBatch, n int, mk func(i int) kRec) {
		b.Magic, b.Base = 2, off
		if b.ProducerID == 0 {
			b.ProducerID = -1
			b.ProducerEpoch = -1
		}
		b.Timestamp = ts
		for i := range n {
			r := mk(i)
			r.Offset = off + int64(i)
			r.Timestamp = ts + int64(rng.Intn(1000))
			if b.LogAppendTime {
				r.Timestamp = ts + 5000
			}
			r.Control = b.Control
			b.Recs = append(b.Recs, r)
		}
		if b.LogAppendTime {
			b.Recs[0].Timestamp = ts + 5000
		}
		out = append(out, b)
		off += int64(n)
		ts += 10000
	}
	plain := func(i int) kRec {
		r := kRec{Key: fmt.Appendf(nil, "user-%d", rng.Intn(100)), Value: fmt.Appendf(nil, `{"n":%d,"pad":"%s"}`, i, bytes.Repeat([]byte("ab"), rng.Intn(40)))}
		switch rng.Intn(6) {
		case 0:
			r.Key = nil
		case 1:
			r.Value = nil
		case 2:
			r.Value = []byte{}
		case 3:
			r.Headers = []kHdr{{Key: "trace-id", Value: fmt.Appendf(nil, "t%d", i)}, {Key: "null", Value: nil}, {Key: "empty", Value: []byte{}}}
		}
		return r
	}
	for c := int8(0); c <= 4; c++ {
		add(kBatch{Codec: c}, 1+rng.Intn(60), plain)
		add(kBatch{Codec: c, LogAppendTime: true}, 3, plain)
	}
	big := make([]byte, 1<<20)
	rng.Read(big)
	add(kBatch{Codec: 0}, 1, func(int) kRec { return kRec{Key: []byte("big"), Value: big} })
	add(kBatch{Codec: 4}, 2, func(i int) kRec { return kRec{Key: []byte("big-zstd"), Value: big[i:]} })
	marker := func(typ byte) func(int) kRec {
		return func(int) kRec { return kRec{Key: []byte{0, 0, 0, typ}, Value: []byte{0, 0, 0, 0, 0, 7}} }
	}
	add(kBatch{Codec: 1, Transactional: true, ProducerID: 77, ProducerEpoch: 2}, 5, plain)
	add(kBatch{Transactional: true, Control: true, ProducerID: 77, ProducerEpoch: 2}, 1, marker(1))
	add(kBatch{Codec: 4, Transactional: true, ProducerID: 78}, 4, plain)
	add(kBatch{Transactional: true, Control: true, ProducerID: 78}, 1, marker(0))
	return out
}

// kafkaTiny returns 100 batches of 1,000 tiny records (100,000 in all),
// the codecs in turn.
func kafkaTiny() []kBatch {
	var out []kBatch
	off := int64(0)
	for b := range 100 {
		kb := kBatch{Magic: 2, Codec: int8(b % 5), Base: off, Timestamp: 1600000000000 + int64(b), ProducerID: -1, ProducerEpoch: -1}
		for i := range 1000 {
			kb.Recs = append(kb.Recs, kRec{Offset: off + int64(i), Timestamp: kb.Timestamp, Value: fmt.Appendf(nil, "%d", off+int64(i))})
		}
		out = append(out, kb)
		off += 1000
	}
	return out
}

// kafkaLegacy returns message-set batches of magic m: plain messages and
// a wrapper of each codec of the era (v0: gzip and snappy; v1: lz4 too, and
// one with log-append time).
func kafkaLegacy(m int8) []kBatch {
	var out []kBatch
	off, ts := int64(0), int64(1500000000000)
	msgTS := func(t int64) int64 {
		if m == 0 {
			return -1
		}
		return t
	}
	add := func(c int8, logAppend bool, n int) {
		b := kBatch{Magic: m, Codec: c, Base: off, Timestamp: ts + 99, LogAppendTime: logAppend && m == 1}
		for i := range n {
			r := kRec{Offset: off + int64(i), Timestamp: msgTS(ts + int64(i)), Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, "v%d-%d", m, off+int64(i))}
			if i%3 == 1 {
				r.Key = nil
			}
			if b.LogAppendTime {
				r.Timestamp = ts + 99
			}
			b.Recs = append(b.Recs, r)
		}
		out = append(out, b)
		off += int64(n)
		ts += 1000
	}
	add(0, false, 3)
	add(1, false, 4)
	add(2, false, 5)
	if m == 1 {
		add(3, false, 6)
		add(1, true, 2)
	}
	add(0, false, 2)
	return out
}

// want returns the records of batches in order.
func want(batches []kBatch) []kRec {
	var out []kRec
	for _, b := range batches {
		out = append(out, b.Recs...)
	}
	return out
}

// dataValues returns the values of the data records, nulls as empty.
func dataValues(recs []kRec) [][]byte {
	var out [][]byte
	for _, r := range recs {
		if !r.Control {
			out = append(out, append([]byte{}, r.Value...))
		}
	}
	return out
}

// TestKafkaInterop: segments written by franz-go and by sarama are read
// back record for record by the other library and by recfs (its scanner,
// and its table as cat and mounts serve it).
func TestKafkaInterop(t *testing.T) {
	corpora := map[string][]kBatch{
		"corpus": kafkaCorpus(rand.New(rand.NewSource(26))),
		"tiny":   kafkaTiny(),
		"v0":     kafkaLegacy(0),
		"v1":     kafkaLegacy(1),
	}
	writers := map[string]func(testing.TB, []kBatch) []byte{"franz-go": franzSegment, "sarama": saramaSegment}
	readers := map[string]func(testing.TB, []byte) []kRec{"franz-go": franzRead, "sarama": saramaRead}
	for cname, batches := range corpora {
		for wname, write := range writers {
			t.Run(cname+"/"+wname, func(t *testing.T) {
				seg := write(t, batches)
				exp := want(batches)
				for rname, read := range readers {
					if rname == wname {
						continue
					}
					if err := sameRecs(read(t, seg), exp); err != nil {
						t.Fatalf("%s reading %s's segment: %v", rname, wname, err)
					}
				}
				got, dmg := recfsKafkaRead(t, seg)
				if len(dmg) != 0 {
					t.Fatalf("recfs found damage in %s's segment: %v", wname, dmg)
				}
				if err := sameRecs(got, exp); err != nil {
					t.Fatalf("recfs reading %s's segment: %v", wname, err)
				}
				if !equalItems(recfsKafkaValues(t, seg), dataValues(exp)) {
					t.Fatalf("recfs's table of %s's segment does not serve the values written", wname)
				}
				t.Logf("%s: %d batches, %d records, %d bytes", wname, len(batches), len(exp), len(seg))
			})
		}
	}
}

// TestKafkaInteropDamage: copies of each library's segment damaged at
// random places, and cut at random places, keep at least every batch that
// the damage did not touch (for a cut: every batch before it).
func TestKafkaInteropDamage(t *testing.T) {
	batches := kafkaCorpus(rand.New(rand.NewSource(7)))
	batches = append(batches[:10:10], batches[12:]...) // without the 1 MiB values: faster, same shapes
	for wname, write := range map[string]func(testing.TB, []kBatch) []byte{"franz-go": franzSegment, "sarama": saramaSegment} {
		t.Run(wname, func(t *testing.T) {
			seg := write(t, batches)
			bounds := batchBounds(seg)
			rng := rand.New(rand.NewSource(int64(len(seg))))
			for trial := range 500 {
				file := bytes.Clone(seg)
				hit := map[int]bool{}
				cut := len(file)
				if trial%2 == 1 {
					cut = rng.Intn(len(file))
					file = file[:cut]
				} else {
					for range 1 + rng.Intn(4) {
						p := rng.Intn(len(file))
						file[p] ^= byte(1 + rng.Intn(255))
						hit[batchAt(bounds, p)] = true
					}
				}
				var keep []kRec
				for i, b := range batches {
					if !hit[i] && bounds[i+1] <= cut {
						keep = append(keep, b.Recs...)
					}
				}
				got, _ := recfsKafkaRead(t, file)
				if missing := missingRecs(got, keep); missing != nil {
					t.Fatalf("trial %d (cut %d, hit %v): record of an untouched batch missing or changed: %+v", trial, cut, hit, *missing)
				}
			}
		})
	}
}

// batchBounds returns the start of every batch of a clean segment, and
// its end.
func batchBounds(seg []byte) []int {
	var out []int
	p := 0
	for p < len(seg) {
		out = append(out, p)
		p += 12 + int(uint32(seg[p+8])<<24|uint32(seg[p+9])<<16|uint32(seg[p+10])<<8|uint32(seg[p+11]))
	}
	return append(out, p)
}

// batchAt returns the number of the batch holding byte p.
func batchAt(bounds []int, p int) int {
	for i := 0; i+1 < len(bounds); i++ {
		if p < bounds[i+1] {
			return i
		}
	}
	return len(bounds) - 2
}

// missingRecs returns the first record of want that got lacks (same
// offset, timestamp, key, value and headers), nil when got holds them all
// in order.
func missingRecs(got, want []kRec) *kRec {
	i := 0
	for _, w := range want {
		for i < len(got) && sameRecs(got[i:i+1], []kRec{w}) != nil {
			i++
		}
		if i == len(got) {
			return &w
		}
		i++
	}
	return nil
}
