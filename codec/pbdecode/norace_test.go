//go:build !race

package pbdecode

// hostileElems is the size of the hostile packed fields: ten million.
const hostileElems = 10_000_000
