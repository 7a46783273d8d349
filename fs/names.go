package fs

import (
	"math"
	"strconv"
	"strings"

	"github.com/recfs/recfs/codec/decode"
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
	return string(decode.AppendRecordNumber(buf[:0], n, NameWidth(count)))
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

// SeqPrefix starts the unlisted name that finds a record by the number
// its format gives it ("@1234": the record at Kafka offset 1234).
const SeqPrefix = "@"

// ParseSeqName returns the number an "@N" name asks for: N in decimal
// without leading zeros (but 0 itself).
func ParseSeqName(name string) (int64, bool) {
	digits, ok := strings.CutPrefix(name, SeqPrefix)
	if !ok || len(digits) == 0 || (digits[0] == '0' && len(digits) > 1) {
		return 0, false
	}
	v, err := strconv.ParseInt(digits, 10, 64)
	return v, err == nil && v >= 0
}

// lookupSeq finds the record "@N" names in src, when src (or the source a
// view renders) numbers its records.
func lookupSeq(src Records, name string) (int64, bool) {
	seq, ok := ParseSeqName(name)
	if !ok {
		return 0, false
	}
	for {
		if ss, ok := src.(SeqRecords); ok {
			return ss.BySeq(seq)
		}
		u, ok := src.(interface{ Unwrap() Records })
		if !ok {
			return 0, false
		}
		src = u.Unwrap()
	}
}
