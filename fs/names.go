package fs

import (
	"math"
	"strconv"
)

// minNameWidth is the smallest width of a record file name.
const minNameWidth = 6

// NameWidth returns the number of digits of record names in a directory of
// count records: max(6, digits(count-1)).
func NameWidth(count int64) int {
	w := 1
	for v := count - 1; v >= 10; v /= 10 {
		w++
	}
	return max(w, minNameWidth)
}

// RecordName returns the file name of record n in a directory of count
// records: n in decimal, zero-padded to NameWidth(count).
func RecordName(n, count int64) string {
	var buf [24]byte
	return string(appendRecordName(buf[:0], n, NameWidth(count)))
}

// appendRecordName appends n zero-padded to width digits.
func appendRecordName(b []byte, n int64, width int) []byte {
	var digits [20]byte
	d := strconv.AppendInt(digits[:0], n, 10)
	for i := len(d); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, d...)
}

// ParseRecordName returns the record number that name denotes in a
// directory of count records. It accepts the padded name RecordName returns
// and the plain decimal number without leading zeros; any other name, and
// any number outside [0, count), is rejected.
func ParseRecordName(name string, count int64) (int64, bool) {
	if len(name) == 0 || len(name) > 19 || count <= 0 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int64(c - '0')
		if n > (math.MaxInt64-d)/10 {
			return 0, false // overflows: no record has that number
		}
		n = n*10 + d
	}
	if n >= count {
		return 0, false
	}
	if len(name) == NameWidth(count) {
		return n, true
	}
	// Unpadded: no leading zero unless the number is 0 itself.
	if name[0] == '0' && len(name) > 1 {
		return 0, false
	}
	return n, true
}
