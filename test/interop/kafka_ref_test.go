package interop

// The two reference Kafka clients, used as writers and readers of segment
// bytes: franz-go's kmsg types (with kgo's compressors), and sarama, whose
// encoders and decoders are reached through its Broker talking to a
// listener on the loopback that this file plays the broker for (the bytes
// a sarama producer sends are the segment's, and sarama decodes the fetch
// responses it is sent).

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// kBatch is one batch (v2) or message set entry (v0/v1) to write.
type kBatch struct {
	Magic         int8
	Codec         int8 // 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd
	Base          int64
	Timestamp     int64 // base timestamp (v2), or the wrapper's (v0/v1)
	LogAppendTime bool
	Transactional bool
	Control       bool
	ProducerID    int64
	ProducerEpoch int16
	Recs          []kRec // offsets and timestamps as a reader must report them
}

var castagnoliTab = crc32.MakeTable(crc32.Castagnoli)

// --- franz-go as a writer.

// franzCompress compresses p with kgo's default compressor for codec c.
func franzCompress(t testing.TB, c int8, p []byte) []byte {
	codecs := map[int8]kgo.CompressionCodec{1: kgo.GzipCompression(), 2: kgo.SnappyCompression(), 3: kgo.Lz4Compression(), 4: kgo.ZstdCompression()}
	comp, err := kgo.DefaultCompressor(codecs[c])
	if err != nil || comp == nil {
		t.Fatalf("kgo compressor %d: %v", c, err)
	}
	var buf bytes.Buffer
	out, typ := comp.Compress(&buf, p)
	if int8(typ) != c {
		t.Fatalf("kgo compressed with codec %d, asked %d", typ, c)
	}
	return bytes.Clone(out)
}

// franzSegment writes batches with franz-go's kmsg types.
func franzSegment(t testing.TB, batches []kBatch) []byte {
	var seg []byte
	for _, b := range batches {
		if b.Magic == 2 {
			seg = franzV2(t, seg, b)
		} else {
			seg = franzV1(t, seg, b)
		}
	}
	return seg
}

func franzV2(t testing.TB, dst []byte, b kBatch) []byte {
	var recs []byte
	maxTS := b.Timestamp
	for _, r := range b.Recs {
		kr := kmsg.Record{TimestampDelta64: r.Timestamp - b.Timestamp, OffsetDelta: int32(r.Offset - b.Base), Key: r.Key, Value: r.Value}
		if b.LogAppendTime {
			kr.TimestampDelta64 = 0
		}
		for _, h := range r.Headers {
			kr.Headers = append(kr.Headers, kmsg.Header{Key: h.Key, Value: h.Value})
		}
		body := kr.AppendTo(nil)[1:] // without the (zero) length
		kr.Length = int32(len(body))
		recs = kr.AppendTo(recs)
		maxTS = max(maxTS, r.Timestamp)
	}
	if b.Codec != 0 {
		recs = franzCompress(t, b.Codec, recs)
	}
	attr := int16(b.Codec)
	if b.LogAppendTime {
		attr |= 0x08
	}
	if b.Transactional {
		attr |= 0x10
	}
	if b.Control {
		attr |= 0x20
	}
	last := b.Recs[len(b.Recs)-1].Offset - b.Base
	rb := kmsg.RecordBatch{FirstOffset: b.Base, Length: int32(49 + len(recs)), PartitionLeaderEpoch: 4, Magic: 2,
		Attributes: attr, LastOffsetDelta: int32(last), FirstTimestamp: b.Timestamp, MaxTimestamp: maxTS,
		ProducerID: b.ProducerID, ProducerEpoch: b.ProducerEpoch, FirstSequence: -1, NumRecords: int32(len(b.Recs)), Records: recs}
	if b.ProducerID >= 0 {
		rb.FirstSequence = 0
	}
	start := len(dst)
	dst = rb.AppendTo(dst)
	binary.BigEndian.PutUint32(dst[start+17:], crc32.Checksum(dst[start+21:], castagnoliTab))
	return dst
}

// franzMessage appends one v0/v1 message with kmsg, its size and CRC
// filled in as a producer does.
func franzMessage(dst []byte, magic int8, offset int64, attr int8, ts int64, key, value []byte) []byte {
	start := len(dst)
	if magic == 0 {
		m := kmsg.MessageV0{Offset: offset, Magic: 0, Attributes: attr, Key: key, Value: value}
		dst = m.AppendTo(dst)
	} else {
		m := kmsg.MessageV1{Offset: offset, Magic: 1, Attributes: attr, Timestamp: ts, Key: key, Value: value}
		dst = m.AppendTo(dst)
	}
	binary.BigEndian.PutUint32(dst[start+8:], uint32(len(dst)-start-12))
	binary.BigEndian.PutUint32(dst[start+12:], crc32.ChecksumIEEE(dst[start+16:]))
	return dst
}

func franzV1(t testing.TB, dst []byte, b kBatch) []byte {
	if b.Codec == 0 {
		for _, r := range b.Recs {
			dst = franzMessage(dst, b.Magic, r.Offset, 0, r.Timestamp, r.Key, r.Value)
		}
		return dst
	}
	var inner []byte
	last := b.Recs[len(b.Recs)-1].Offset
	for _, r := range b.Recs {
		off := r.Offset // v0: absolute inner offsets
		if b.Magic == 1 {
			off = r.Offset - (last - int64(len(b.Recs)) + 1) // v1: relative
		}
		inner = franzMessage(inner, b.Magic, off, 0, r.Timestamp, r.Key, r.Value)
	}
	attr := b.Codec
	if b.LogAppendTime {
		attr |= 0x08
	}
	return franzMessage(dst, b.Magic, last, attr, b.Timestamp, nil, franzCompress(t, b.Codec, inner))
}

// --- franz-go as a reader.

// franzRead reads every record of a segment with franz-go: kmsg decodes
// batches, records and messages, kgo's default decompressor the codecs;
// checksums are checked as kgo's consumer checks them.
func franzRead(t testing.TB, seg []byte) []kRec {
	dec := kgo.DefaultDecompressor()
	var out []kRec
	for len(seg) > 0 {
		n := 12 + int(int32(binary.BigEndian.Uint32(seg[8:])))
		raw := seg[:n]
		seg = seg[n:]
		if raw[16] < 2 {
			out = franzReadMessage(t, dec, raw, out)
			continue
		}
		var rb kmsg.RecordBatch
		if err := rb.ReadFrom(raw); err != nil {
			t.Fatalf("franz-go: batch: %v", err)
		}
		if uint32(rb.CRC) != crc32.Checksum(raw[21:], castagnoliTab) {
			t.Fatal("franz-go: batch CRC mismatch")
		}
		recs, err := dec.Decompress(rb.Records, kgo.CompressionCodecType(rb.Attributes&7))
		if err != nil {
			t.Fatalf("franz-go: decompress: %v", err)
		}
		for range rb.NumRecords {
			l, k := binary.Varint(recs)
			var kr kmsg.Record
			if err := kr.ReadFrom(recs[:k+int(l)]); err != nil {
				t.Fatalf("franz-go: record: %v", err)
			}
			recs = recs[k+int(l):]
			r := kRec{Offset: rb.FirstOffset + int64(kr.OffsetDelta), Timestamp: rb.FirstTimestamp + kr.TimestampDelta64,
				Key: clone(kr.Key), Value: clone(kr.Value), Control: rb.Attributes&0x20 != 0}
			if rb.Attributes&0x08 != 0 {
				r.Timestamp = rb.MaxTimestamp
			}
			for _, h := range kr.Headers {
				r.Headers = append(r.Headers, kHdr{Key: h.Key, Value: clone(h.Value)})
			}
			out = append(out, r)
		}
	}
	return out
}

func franzReadMessage(t testing.TB, dec kgo.Decompressor, raw []byte, out []kRec) []kRec {
	if crc32.ChecksumIEEE(raw[16:]) != binary.BigEndian.Uint32(raw[12:]) {
		t.Fatal("franz-go: message CRC mismatch")
	}
	var m kmsg.MessageV1
	if raw[16] == 0 {
		var m0 kmsg.MessageV0
		if err := m0.ReadFrom(raw); err != nil {
			t.Fatalf("franz-go: message v0: %v", err)
		}
		m = kmsg.MessageV1{Offset: m0.Offset, Attributes: m0.Attributes, Timestamp: -1, Key: m0.Key, Value: m0.Value}
	} else if err := m.ReadFrom(raw); err != nil {
		t.Fatalf("franz-go: message v1: %v", err)
	}
	if m.Attributes&7 == 0 {
		return append(out, kRec{Offset: m.Offset, Timestamp: m.Timestamp, Key: clone(m.Key), Value: clone(m.Value)})
	}
	inner, err := dec.Decompress(m.Value, kgo.CompressionCodecType(m.Attributes&7))
	if err != nil {
		t.Fatalf("franz-go: decompress wrapper: %v", err)
	}
	var msgs []kRec
	for len(inner) > 0 {
		n := 12 + int(int32(binary.BigEndian.Uint32(inner[8:])))
		msgs = franzReadMessage(t, dec, inner[:n], msgs)
		inner = inner[n:]
	}
	for i := range msgs {
		if raw[16] == 1 {
			msgs[i].Offset += m.Offset - (len64(msgs) - 1) // relative inner offsets
			if m.Attributes&0x08 != 0 {
				msgs[i].Timestamp = m.Timestamp
			}
		}
	}
	return append(out, msgs...)
}

func len64[T any](s []T) int64 { return int64(len(s)) }

// --- sarama, through a loopback broker.

// saramaCodec maps Kafka's codec numbers to sarama's.
var saramaCodec = map[int8]sarama.CompressionCodec{0: sarama.CompressionNone, 1: sarama.CompressionGZIP,
	2: sarama.CompressionSnappy, 3: sarama.CompressionLZ4, 4: sarama.CompressionZSTD}

// loopbackBroker accepts one connection from a sarama Broker and answers
// each request it reads with respond (nil: no answer).
type loopbackBroker struct {
	ln   net.Listener
	reqs chan []byte
	errc chan error
}

// startBroker listens on the loopback; respond turns a request (api key,
// version, body after the header) into a response body, or nil.
func startBroker(t testing.TB, respond func(key, version int16, body []byte) []byte) (*loopbackBroker, *sarama.Broker) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lb := &loopbackBroker{ln: ln, reqs: make(chan []byte, 16), errc: make(chan error, 1)}
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			lb.errc <- err
			return
		}
		defer conn.Close()
		for {
			var size [4]byte
			if _, err := io.ReadFull(conn, size[:]); err != nil {
				lb.errc <- nil
				return
			}
			req := make([]byte, binary.BigEndian.Uint32(size[:]))
			if _, err := io.ReadFull(conn, req); err != nil {
				lb.errc <- err
				return
			}
			key, version := int16(binary.BigEndian.Uint16(req)), int16(binary.BigEndian.Uint16(req[2:]))
			corr := req[4:8]
			idLen := int(int16(binary.BigEndian.Uint16(req[8:])))
			body := req[10+max(idLen, 0):]
			resp := respond(key, version, body)
			if resp == nil {
				continue
			}
			out := binary.BigEndian.AppendUint32(nil, uint32(4+len(resp)))
			out = append(append(out, corr...), resp...)
			if _, err := conn.Write(out); err != nil {
				lb.errc <- err
				return
			}
		}
	}()
	conf := sarama.NewConfig()
	conf.Version = sarama.V2_1_0_0
	conf.ApiVersionsRequest = false
	conf.Net.ReadTimeout = 30 * time.Second
	conf.Net.WriteTimeout = 30 * time.Second
	b := sarama.NewBroker(ln.Addr().String())
	if err := b.Open(conf); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		b.Close()
		ln.Close()
	})
	return lb, b
}

// saramaProduce sends req (acks: none) through a sarama Broker and returns
// the records bytes of partition 0 of topic "t" that sarama encoded.
func saramaProduce(t testing.TB, req *sarama.ProduceRequest) []byte {
	got := make(chan []byte, 1)
	_, b := startBroker(t, func(key, version int16, body []byte) []byte {
		if key != 0 {
			t.Errorf("sarama sent request %d", key)
			return nil
		}
		pr := kmsg.ProduceRequest{Version: version}
		if err := pr.ReadFrom(body); err != nil {
			t.Errorf("produce request: %v", err)
			got <- nil
			return nil
		}
		got <- bytes.Clone(pr.Topics[0].Partitions[0].Records)
		return nil
	})
	req.RequiredAcks = sarama.NoResponse
	if _, err := b.Produce(req); err != nil {
		t.Fatalf("sarama produce: %v", err)
	}
	select {
	case p := <-got:
		return p
	case <-time.After(30 * time.Second):
		t.Fatal("no produce request")
	}
	return nil
}

// saramaSegment writes batches with sarama's encoders: record batches one
// produce request each (the broker puts the offsets in), message sets as
// produce requests of v0/v1 messages, compressed wrappers around the
// bytes of a set sarama encoded first.
func saramaSegment(t testing.TB, batches []kBatch) []byte {
	var seg []byte
	for _, b := range batches {
		if b.Magic == 2 {
			seg = append(seg, saramaV2(t, b)...)
			continue
		}
		seg = append(seg, saramaSet(t, b)...)
	}
	return seg
}

func saramaV2(t testing.TB, b kBatch) []byte {
	rb := &sarama.RecordBatch{Version: 2, FirstOffset: b.Base, Codec: saramaCodec[b.Codec], Control: b.Control,
		LogAppendTime: b.LogAppendTime, IsTransactional: b.Transactional, ProducerID: b.ProducerID, ProducerEpoch: b.ProducerEpoch,
		FirstSequence: -1, FirstTimestamp: time.UnixMilli(b.Timestamp), PartitionLeaderEpoch: 4}
	if b.ProducerID >= 0 {
		rb.FirstSequence = 0
	}
	maxTS := b.Timestamp
	for _, r := range b.Recs {
		sr := &sarama.Record{OffsetDelta: r.Offset - b.Base, Key: r.Key, Value: r.Value,
			TimestampDelta: time.Duration(r.Timestamp-b.Timestamp) * time.Millisecond}
		if b.LogAppendTime {
			sr.TimestampDelta = 0
		}
		for _, h := range r.Headers {
			sr.Headers = append(sr.Headers, &sarama.RecordHeader{Key: []byte(h.Key), Value: h.Value})
		}
		rb.Records = append(rb.Records, sr)
		maxTS = max(maxTS, r.Timestamp)
	}
	rb.MaxTimestamp = time.UnixMilli(maxTS)
	rb.LastOffsetDelta = int32(b.Recs[len(b.Recs)-1].Offset - b.Base)
	req := &sarama.ProduceRequest{Version: 7}
	req.AddBatch("t", 0, rb)
	return saramaProduce(t, req)
}

func saramaMessages(t testing.TB, magic int8, blocks []*sarama.MessageBlock) []byte {
	req := &sarama.ProduceRequest{Version: 2}
	req.AddSet("t", 0, &sarama.MessageSet{Messages: blocks})
	return saramaProduce(t, req)
}

func saramaSet(t testing.TB, b kBatch) []byte {
	var blocks []*sarama.MessageBlock
	last := b.Recs[len(b.Recs)-1].Offset
	for _, r := range b.Recs {
		m := &sarama.Message{Version: b.Magic, Key: r.Key, Value: r.Value}
		if b.Magic == 1 {
			m.Timestamp = time.UnixMilli(r.Timestamp)
		}
		off := r.Offset
		if b.Codec != 0 && b.Magic == 1 {
			off = r.Offset - (last - int64(len(b.Recs)) + 1)
		}
		blocks = append(blocks, &sarama.MessageBlock{Offset: off, Msg: m})
	}
	set := saramaMessages(t, b.Magic, blocks)
	if b.Codec == 0 {
		return set
	}
	w := &sarama.Message{Version: b.Magic, Codec: saramaCodec[b.Codec], Value: set, LogAppendTime: b.LogAppendTime}
	if b.Magic == 1 {
		w.Timestamp = time.UnixMilli(b.Timestamp)
	}
	return saramaMessages(t, b.Magic, []*sarama.MessageBlock{{Offset: last, Msg: w}})
}

// saramaRead reads every record of a segment with sarama: the segment is
// the records of a fetch response (v4) that a sarama Broker decodes.
// Offsets of v1 wrappers' inner messages are made absolute, and log-append
// time applied, as sarama's consumer does.
func saramaRead(t testing.TB, seg []byte) []kRec {
	_, b := startBroker(t, func(key, version int16, body []byte) []byte {
		if key != 1 {
			t.Errorf("sarama sent request %d", key)
			return nil
		}
		resp := kmsg.FetchResponse{Version: version, Topics: []kmsg.FetchResponseTopic{{Topic: "t",
			Partitions: []kmsg.FetchResponseTopicPartition{{Partition: 0, HighWatermark: 1 << 40, LastStableOffset: 1 << 40, RecordBatches: seg}}}}}
		return resp.AppendTo(nil)
	})
	req := &sarama.FetchRequest{Version: 4, MaxBytes: 1 << 30, MinBytes: 1}
	req.AddBlock("t", 0, 0, 1<<30, -1)
	res, err := b.Fetch(req)
	if err != nil {
		t.Fatalf("sarama fetch: %v", err)
	}
	blk := res.GetBlock("t", 0)
	if blk == nil || blk.Err != sarama.ErrNoError {
		t.Fatalf("sarama fetch block: %+v", blk)
	}
	var out []kRec
	for _, rs := range blk.RecordsSet {
		if rb := rs.RecordBatch; rb != nil {
			for _, r := range rb.Records {
				k := kRec{Offset: rb.FirstOffset + r.OffsetDelta, Timestamp: rb.FirstTimestamp.Add(r.TimestampDelta).UnixMilli(),
					Key: clone(r.Key), Value: clone(r.Value), Control: rb.Control}
				if rb.LogAppendTime {
					k.Timestamp = rb.MaxTimestamp.UnixMilli()
				}
				for _, h := range r.Headers {
					k.Headers = append(k.Headers, kHdr{Key: string(h.Key), Value: clone(h.Value)})
				}
				out = append(out, k)
			}
			continue
		}
		for _, mb := range rs.MsgSet.Messages {
			out = append(out, saramaMessageRecs(mb)...)
		}
	}
	return out
}

func saramaMessageRecs(mb *sarama.MessageBlock) []kRec {
	ts := func(m *sarama.Message) int64 {
		if m.Version == 0 {
			return -1
		}
		return m.Timestamp.UnixMilli()
	}
	m := mb.Msg
	if m.Set == nil {
		return []kRec{{Offset: mb.Offset, Timestamp: ts(m), Key: clone(m.Key), Value: clone(m.Value)}}
	}
	var out []kRec
	inner := m.Set.Messages
	for _, ib := range inner {
		k := kRec{Offset: ib.Offset, Timestamp: ts(ib.Msg), Key: clone(ib.Msg.Key), Value: clone(ib.Msg.Value)}
		if m.Version >= 1 {
			k.Offset += mb.Offset - inner[len(inner)-1].Offset
			if m.LogAppendTime {
				k.Timestamp = ts(m)
			}
		}
		out = append(out, k)
	}
	return out
}

// sameRecs reports the first difference between got and want, nil when
// they hold the same records (null and empty told apart).
func sameRecs(got, want []kRec) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d records, want %d", len(got), len(want))
	}
	eq := func(a, b []byte) bool { return bytes.Equal(a, b) && (a == nil) == (b == nil) }
	for i, w := range want {
		g := got[i]
		ok := g.Offset == w.Offset && g.Timestamp == w.Timestamp && eq(g.Key, w.Key) && eq(g.Value, w.Value) &&
			g.Control == w.Control && len(g.Headers) == len(w.Headers)
		for j := 0; ok && j < len(w.Headers); j++ {
			ok = g.Headers[j].Key == w.Headers[j].Key && eq(g.Headers[j].Value, w.Headers[j].Value)
		}
		if !ok {
			return fmt.Errorf("record %d: got offset %d ts %d key %.40q value %.40q (%d bytes) headers %v control %v; want offset %d ts %d key %.40q value %.40q (%d bytes) headers %v control %v",
				i, g.Offset, g.Timestamp, g.Key, g.Value, len(g.Value), g.Headers, g.Control, w.Offset, w.Timestamp, w.Key, w.Value, len(w.Value), w.Headers, w.Control)
		}
	}
	return nil
}
