package codec

// KindSchedules is the kind of ListSchedules' tokens.
const KindSchedules = 'h'
