package kafka

import (
	"encoding/binary"
	"strconv"
)

// ControlType is the type of a control record, from its key (version
// int16, type int16).
type ControlType int16

// The control record types: transaction markers, and the KRaft metadata
// log's control records.
const (
	ControlAbort         ControlType = 0
	ControlCommit        ControlType = 1
	ControlLeaderChange  ControlType = 2
	ControlSnapshotStart ControlType = 3
	ControlSnapshotEnd   ControlType = 4
	ControlKRaftVersion  ControlType = 5
	ControlVoters        ControlType = 6
	// ControlUnknown is returned for a key too short to hold a type.
	ControlUnknown ControlType = -1
)

var controlNames = [...]string{
	ControlAbort: "abort", ControlCommit: "commit", ControlLeaderChange: "leader-change",
	ControlSnapshotStart: "snapshot-header", ControlSnapshotEnd: "snapshot-footer",
	ControlKRaftVersion: "kraft-version", ControlVoters: "voters",
}

// ParseControlType returns the type a control record's key holds.
func ParseControlType(key []byte) ControlType {
	if len(key) < 4 {
		return ControlUnknown
	}
	return ControlType(int16(binary.BigEndian.Uint16(key[2:])))
}

// String names the control type as kafka-dump-log prints it, in lower case.
func (t ControlType) String() string {
	if t >= 0 && int(t) < len(controlNames) {
		return controlNames[t]
	}
	return "control-" + strconv.Itoa(int(t))
}
