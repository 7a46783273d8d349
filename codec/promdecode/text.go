package promdecode

import (
	"math"
	"strconv"
	"time"

	"github.com/recfs/recfs/codec/decode"
)

// staleNaN is the bit pattern of Prometheus's staleness marker.
const staleNaN = 0x7ff0000000000002

// appendValue appends a sample value: Go's shortest 'g' form, NaN, +Inf,
// -Inf or stale-NaN.
func appendValue(dst []byte, v float64) []byte {
	switch {
	case math.Float64bits(v) == staleNaN:
		return append(dst, "stale-NaN"...)
	case math.IsNaN(v):
		return append(dst, "NaN"...)
	case math.IsInf(v, 1):
		return append(dst, "+Inf"...)
	case math.IsInf(v, -1):
		return append(dst, "-Inf"...)
	}
	return strconv.AppendFloat(dst, v, 'g', -1, 64)
}

// appendJSONValue appends v as a JSON number, or as a string when it is
// not finite.
func appendJSONValue(dst []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		dst = append(dst, '"')
		dst = appendValue(dst, v)
		return append(dst, '"')
	}
	return strconv.AppendFloat(dst, v, 'g', -1, 64)
}

// Times RFC 3339 can show: years 0 to 9999.
var (
	minTime = time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	maxTime = time.Date(9999, 12, 31, 23, 59, 59, 999e6, time.UTC).UnixMilli()
)

// appendTime appends a Prometheus timestamp (milliseconds since the epoch)
// in RFC 3339 with milliseconds, UTC, or as the integer when out of range.
func appendTime(dst []byte, ms int64) []byte {
	if ms < minTime || ms > maxTime {
		return strconv.AppendInt(dst, ms, 10)
	}
	return time.UnixMilli(ms).UTC().AppendFormat(dst, "2006-01-02T15:04:05.000Z07:00")
}

// appendJSONTime appends the fields "KEY":"RFC 3339" (when representable)
// and "KEY_ms":ms.
func appendJSONTime(w *decode.Writer, key string, ms int64) {
	if ms >= minTime && ms <= maxTime {
		w.Key(key)
		w.B = append(w.B, '"')
		w.B = appendTime(w.B, ms)
		w.B = append(w.B, '"')
	}
	w.Key(key + "_ms")
	w.B = strconv.AppendInt(w.B, ms, 10)
}

// appendLabels appends an encoded label set in Prometheus's text syntax:
// the metric name (when it is a valid one) before the braces, the other
// labels inside as name="value" joined by ", ".
func appendLabels(dst, enc []byte) []byte {
	var metric []byte
	labelPairs(enc, func(name, value []byte) {
		if metric == nil && string(name) == "__name__" && validName(value, true) {
			metric = value
		}
	})
	dst = append(dst, metric...)
	dst = append(dst, '{')
	first := true
	labelPairs(enc, func(name, value []byte) {
		if metric != nil && string(name) == "__name__" {
			return
		}
		if !first {
			dst = append(dst, ", "...)
		}
		first = false
		if validName(name, false) {
			dst = append(dst, name...)
		} else {
			dst = appendQuoted(dst, name)
		}
		dst = append(dst, '=')
		dst = appendQuoted(dst, value)
	})
	return append(dst, '}')
}

// appendJSONLabels appends an encoded label set as a JSON object.
func appendJSONLabels(dst, enc []byte) []byte {
	dst = append(dst, '{')
	first := true
	labelPairs(enc, func(name, value []byte) {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = decode.AppendJSONBytes(dst, name)
		dst = append(dst, ':')
		dst = decode.AppendJSONBytes(dst, value)
	})
	return append(dst, '}')
}

// validName reports whether b is a label name, or with metric a metric
// name (which may hold colons), of the classic character set.
func validName(b []byte, metric bool) bool {
	if len(b) == 0 {
		return false
	}
	for i, c := range b {
		ok := c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' || metric && c == ':'
		if !ok {
			return false
		}
	}
	return true
}

const hexDigits = "0123456789abcdef"

// appendQuoted appends b as a quoted label value: \\, \" and \n escaped
// as Prometheus does, other control bytes as \xNN.
func appendQuoted(dst, b []byte) []byte {
	dst = append(dst, '"')
	for _, c := range b {
		switch {
		case c == '\\' || c == '"':
			dst = append(dst, '\\', c)
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c < 0x20 || c == 0x7f:
			dst = append(dst, '\\', 'x', hexDigits[c>>4], hexDigits[c&15])
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}

// appendHex appends b as lowercase hex digits.
func appendHex(dst, b []byte) []byte {
	for _, c := range b {
		dst = append(dst, hexDigits[c>>4], hexDigits[c&15])
	}
	return dst
}
