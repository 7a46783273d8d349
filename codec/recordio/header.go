package recordio

import (
	"encoding/binary"
	"fmt"
)

// HeaderEntry is one key/value of a recordio header; Value is bool, int64,
// uint64 or string.
//
// Headers are ordered lists: keys may repeat and their order is kept, as the
// reference library writes and reads them (spec section 5).
type HeaderEntry struct {
	Key   string
	Value any
}

// Reserved header keys (spec section 6).
const (
	// HeaderKeyTrailer is the key of the bool entry that promises a trailer block.
	HeaderKeyTrailer = "trailer"
	// HeaderKeyTransformer is the key of each transformer entry, in application order.
	HeaderKeyTransformer = "transformer"
)

// Type tags of header values (spec section 5; the code, not the README).
const (
	hdrTagBool   = 1
	hdrTagInt    = 2
	hdrTagUint   = 3
	hdrTagString = 4
)

// normalizeHeaderValue maps the Go integer kinds the reference accepts onto
// int64/uint64 and rejects every other type.
func normalizeHeaderValue(v any) (any, error) {
	switch x := v.(type) {
	case bool, int64, uint64, string:
		return x, nil
	case int:
		return int64(x), nil
	case int8:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case uint:
		return uint64(x), nil
	case uint8:
		return uint64(x), nil
	case uint16:
		return uint64(x), nil
	case uint32:
		return uint64(x), nil
	}
	return nil, fmt.Errorf("codec: illegal recordio header value type %T", v)
}

// appendTypedUint appends tag 03 and the uvarint of u.
func appendTypedUint(b []byte, u uint64) []byte {
	return binary.AppendUvarint(append(b, hdrTagUint), u)
}

// appendTypedString appends tag 04, the typed uint length and the bytes of s.
func appendTypedString(b []byte, s string) []byte {
	b = appendTypedUint(append(b, hdrTagString), uint64(len(s)))
	return append(b, s...)
}

// encodeHeaderItem encodes entries as the header item (spec section 5).
func encodeHeaderItem(entries []HeaderEntry) ([]byte, error) {
	b := appendTypedUint(nil, uint64(len(entries)))
	for _, e := range entries {
		v, err := normalizeHeaderValue(e.Value)
		if err != nil {
			return nil, fmt.Errorf("%w (key %q)", err, e.Key)
		}
		b = appendTypedString(b, e.Key)
		switch x := v.(type) {
		case bool:
			c := byte(0)
			if x {
				c = 1
			}
			b = append(b, hdrTagBool, c)
		case int64:
			b = binary.AppendVarint(append(b, hdrTagInt), x)
		case uint64:
			b = appendTypedUint(b, x)
		case string:
			b = appendTypedString(b, x)
		}
	}
	return b, nil
}

// hdrDecoder reads typed header values from a byte slice.
type hdrDecoder struct {
	b   []byte
	off int
}

func (d *hdrDecoder) uvarint() (uint64, error) {
	u, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		return 0, fmt.Errorf("bad uvarint at header byte %d", d.off)
	}
	d.off += n
	return u, nil
}

func (d *hdrDecoder) value() (any, error) {
	if d.off >= len(d.b) {
		return nil, fmt.Errorf("header ends before value at byte %d", d.off)
	}
	tag := d.b[d.off]
	d.off++
	switch tag {
	case hdrTagBool:
		if d.off >= len(d.b) {
			return nil, fmt.Errorf("header ends inside bool at byte %d", d.off)
		}
		v := d.b[d.off] != 0
		d.off++
		return v, nil
	case hdrTagInt:
		v, n := binary.Varint(d.b[d.off:])
		if n <= 0 {
			return nil, fmt.Errorf("bad varint at header byte %d", d.off)
		}
		d.off += n
		return v, nil
	case hdrTagUint:
		return d.uvarint()
	case hdrTagString:
		at := d.off
		l, err := d.value()
		if err != nil {
			return nil, err
		}
		n, ok := l.(uint64)
		if !ok {
			return nil, fmt.Errorf("string length at header byte %d is not a uint", at)
		}
		if n > uint64(len(d.b)-d.off) {
			return nil, fmt.Errorf("string of %d bytes at header byte %d runs past the end", n, at)
		}
		s := string(d.b[d.off : d.off+int(n)])
		d.off += int(n)
		return s, nil
	}
	return nil, fmt.Errorf("unknown header value tag %d at byte %d", tag, d.off-1)
}

// decodeHeaderItem parses a header item. Bytes after the last pair are
// ignored, as by the reference.
func decodeHeaderItem(b []byte) ([]HeaderEntry, error) {
	d := &hdrDecoder{b: b}
	c, err := d.value()
	if err != nil {
		return nil, err
	}
	n, ok := c.(uint64)
	if !ok {
		return nil, fmt.Errorf("header entry count is not a uint")
	}
	// Every pair takes at least 5 bytes (04 03 00 plus a 2-byte value).
	if n > uint64(len(b))/5+1 {
		return nil, fmt.Errorf("header claims %d entries in %d bytes", n, len(b))
	}
	out := make([]HeaderEntry, 0, n)
	for i := uint64(0); i < n; i++ {
		at := d.off
		k, err := d.value()
		if err != nil {
			return nil, err
		}
		ks, ok := k.(string)
		if !ok {
			return nil, fmt.Errorf("header key at byte %d is not a string", at)
		}
		v, err := d.value()
		if err != nil {
			return nil, err
		}
		out = append(out, HeaderEntry{Key: ks, Value: v})
	}
	return out, nil
}

// headerTransformers returns the transformer entries in order; a non-string
// transformer value is an error, as for the reference.
func headerTransformers(h []HeaderEntry) ([]string, error) {
	var out []string
	for _, e := range h {
		if e.Key != HeaderKeyTransformer {
			continue
		}
		s, ok := e.Value.(string)
		if !ok {
			return nil, fmt.Errorf("transformer header value %v is not a string", e.Value)
		}
		out = append(out, s)
	}
	return out, nil
}

// headerHasTrailer applies the reference rule: the first "trailer" entry
// decides, and only a bool true promises a trailer.
func headerHasTrailer(h []HeaderEntry) bool {
	for _, e := range h {
		if e.Key == HeaderKeyTrailer {
			b, ok := e.Value.(bool)
			return ok && b
		}
	}
	return false
}
