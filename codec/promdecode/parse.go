package promdecode

import (
	"encoding/binary"
	"math"

	"github.com/recfs/recfs/codec/decode"
)

// The record types of Prometheus's tsdb/record package.
const (
	typeSeries                       = 1
	typeSamples                      = 2
	typeTombstones                   = 3
	typeExemplars                    = 4
	typeMmapMarkers                  = 5
	typeMetadata                     = 6
	typeHistogramSamples             = 7
	typeFloatHistogramSamples        = 8
	typeCustomBucketsHistograms      = 9
	typeCustomBucketsFloatHistograms = 10
	typeSamplesV2                    = 11
	typeHistogramSamplesV2           = 12
	typeFloatHistogramSamplesV2      = 13
	typeMinValidTime                 = 14
)

// customBucketsSchema is the schema of histograms with custom buckets.
const customBucketsSchema = -53

// The start-time markers of the V2 encodings.
const (
	stNone     = 0
	stSame     = 1
	stExplicit = 2
)

// cursor reads the fields of a record; the first failure sticks as a
// misfit at its offset.
type cursor struct {
	b   []byte
	off int
	err error
}

func (c *cursor) fail(why string) {
	if c.err == nil {
		c.err = decode.Misfit(c.off, "%s", why)
	}
	c.off = len(c.b)
}

func (c *cursor) left() int { return len(c.b) - c.off }

func (c *cursor) byte() byte {
	if c.off >= len(c.b) {
		c.fail("record ends inside a field")
		return 0
	}
	c.off++
	return c.b[c.off-1]
}

func (c *cursor) be64() uint64 {
	if c.left() < 8 {
		c.fail("record ends inside a fixed 8-byte field")
		return 0
	}
	c.off += 8
	return binary.BigEndian.Uint64(c.b[c.off-8:])
}

func (c *cursor) float() float64 { return math.Float64frombits(c.be64()) }

func (c *cursor) uvarint() uint64 {
	v, n := binary.Uvarint(c.b[c.off:])
	if n <= 0 {
		c.fail("bad varint")
		return 0
	}
	c.off += n
	return v
}

// varint reads a zig-zag signed varint (as binary.Varint does): the
// unsigned varint, its low bit the sign.
func (c *cursor) varint() int64 {
	u := c.uvarint()
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v
}

// count reads a count of items each at least min bytes long, refusing
// one the rest of the record cannot hold.
func (c *cursor) count(min int) int {
	n := c.uvarint()
	if c.err == nil && n > uint64(c.left()/max(min, 1)) {
		c.fail("count past the end of the record")
		return 0
	}
	return int(n)
}

// str reads a uvarint-prefixed string.
func (c *cursor) str() []byte {
	n := c.uvarint()
	if c.err == nil && n > uint64(c.left()) {
		c.fail("string past the end of the record")
	}
	if c.err != nil {
		return nil
	}
	c.off += int(n)
	return c.b[c.off-int(n) : c.off]
}

// labels reads a label set (a count, then name and value strings) and
// returns its encoded bytes, which labelPairs walks.
func (c *cursor) labels() []byte {
	start := c.off
	n := c.count(2)
	for range n {
		c.str()
		c.str()
	}
	if c.err != nil {
		return nil
	}
	return c.b[start:c.off]
}

// labelPairs calls f with each name and value of an encoded label set.
func labelPairs(enc []byte, f func(name, value []byte)) {
	c := cursor{b: enc}
	n := c.uvarint()
	for i := uint64(0); i < n && c.err == nil; i++ {
		name := c.str()
		value := c.str()
		if c.err == nil {
			f(name, value)
		}
	}
}

// histogram is a native histogram sample's fields.
type histogram struct {
	float        bool
	hint         byte
	schema       int64
	zeroThresh   float64
	zeroCount    float64
	count, sum   float64
	posSpans     []span
	negSpans     []span
	posBkts      []float64 // float histograms: the bucket counts
	negBkts      []float64
	posInts      []int64 // integer histograms: the bucket deltas as written
	negInts      []int64
	customValues []float64
}

type span struct {
	off int64
	len uint64
}

// histogram reads one histogram (integer or float) into h, reusing its
// slices.
func (c *cursor) histogram(h *histogram, float bool) {
	h.float = float
	h.hint = c.byte()
	h.schema = c.varint()
	h.zeroThresh = c.float()
	if float {
		h.zeroCount, h.count, h.sum = c.float(), c.float(), c.float()
	} else {
		h.zeroCount = float64(c.uvarint())
		h.count = float64(c.uvarint())
		h.sum = c.float()
	}
	h.posSpans = c.spans(h.posSpans[:0])
	h.negSpans = c.spans(h.negSpans[:0])
	if float {
		h.posBkts = c.floats(h.posBkts[:0])
		h.negBkts = c.floats(h.negBkts[:0])
	} else {
		h.posInts = c.ints(h.posInts[:0])
		h.negInts = c.ints(h.negInts[:0])
	}
	h.customValues = h.customValues[:0]
	if h.schema == customBucketsSchema {
		h.customValues = c.floats(h.customValues)
	}
}

func (c *cursor) spans(dst []span) []span {
	n := c.count(2)
	for range n {
		dst = append(dst, span{off: c.varint(), len: c.uvarint()})
	}
	return dst
}

func (c *cursor) floats(dst []float64) []float64 {
	n := c.count(8)
	for range n {
		dst = append(dst, c.float())
	}
	return dst
}

func (c *cursor) ints(dst []int64) []int64 {
	n := c.count(1)
	for range n {
		dst = append(dst, c.varint())
	}
	return dst
}
