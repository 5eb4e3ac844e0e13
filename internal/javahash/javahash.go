// Package javahash holds the iteration order of a java.util.HashMap, which
// AWS's answers show wherever Step Functions builds an object in a HashMap:
// a CSV item's columns (interp) and the AllHttpHeaders of an optimized
// integration's SdkHttpMetadata (task/awssdk).
//
// It imports nothing of stepd's and must not.
package javahash

import "slices"

// Order returns the indexes of keys in the order a java.util.HashMap of
// default capacity iterates them once they are put in the given order: by
// bucket (String.hashCode over UTF-16 code units, spread by its high half,
// modulo the table's size, which doubles past three quarters full), then in
// the order put.
func Order(keys []string) []int {
	size := 16
	for float64(len(keys)) > 0.75*float64(size) {
		size *= 2
	}
	bucket := make([]int, len(keys))
	for i, k := range keys {
		h := hashCode(k)
		spread := uint32(h) ^ uint32(h)>>16
		bucket[i] = int(spread & uint32(size-1))
	}
	order := make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return bucket[a] - bucket[b] })
	return order
}

// hashCode is Java's String.hashCode of s: over its UTF-16 code units.
func hashCode(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 {
			r -= 0x10000
			h = 31*h + int32(0xd800+(r>>10))
			h = 31*h + int32(0xdc00+(r&0x3ff))
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}
