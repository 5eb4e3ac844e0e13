# Shared by run-job.sh and check-status.sh: the job's record and the clock.
#
# Both handlers get the Context object ($$) as their event, as in the seed:
# one compact JSON line from stepd. The job is a file under
# ${STEPD_JOB_DIR:-${TMPDIR:-/tmp}} keyed by the execution (the seed keys its
# S3 objects by the md5 of the execution id), holding when the job started,
# how long it runs and how it ends. Time is the state's EnteredTime, the
# clock the state machine runs on, so the job behaves the same on stepd's
# virtual clock (stepd test, stepd run) and in real time.

# field NAME: the first string member NAME of the event (Execution.Id
# before StateMachine.Id).
field() {
	printf '%s\n' "$event" | awk -v k="\"$1\":\"" '{
		i = index($0, k)
		if (i) { s = substr($0, i + length(k)); print substr(s, 1, index(s, "\"") - 1) }
	}'
}

# number NAME DEFAULT: the first whole-number member NAME of the event.
number() {
	n=$(printf '%s\n' "$event" | awk -v k="\"$1\":" '{
		i = index($0, k)
		if (i) { s = substr($0, i + length(k)); if (match(s, /^[0-9]+/)) print substr(s, 1, RLENGTH) }
	}')
	echo "${n:-$2}"
}

# epoch TIMESTAMP: seconds since 1970 of YYYY-MM-DDThh:mm:ss[.fff]Z, in POSIX
# shell arithmetic (days from the civil calendar, proleptic Gregorian).
epoch() {
	t=$1
	y=${t%%-*}
	t=${t#*-}
	m=${t%%-*}
	t=${t#*-}
	d=${t%%T*}
	t=${t#*T}
	H=${t%%:*}
	t=${t#*:}
	M=${t%%:*}
	t=${t#*:}
	S=${t%%[.Z]*}
	# Two-digit fields lose a leading zero so that 08 is not read as octal.
	m=${m#0} d=${d#0} H=${H#0} M=${M#0} S=${S#0}
	y=$((y - (m <= 2)))
	era=$((y / 400))
	yoe=$((y - era * 400))
	doy=$(((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1))
	doe=$((yoe * 365 + yoe / 4 - yoe / 100 + doy))
	echo $(((era * 146097 + doe - 719468) * 86400 + H * 3600 + M * 60 + S))
}

# The job's folder: one per execution (its id and start time, so that a
# case run again, or twice at once, never finds another run's job).
job_dir() {
	key=$(printf '%s %s' "$(field Id)" "$(field StartTime)" | cksum | cut -d' ' -f1)
	echo "${STEPD_JOB_DIR:-${TMPDIR:-/tmp}}/stepd-job-poller/$key"
}

# now: the time the state was entered, in seconds.
now() {
	epoch "$(field EnteredTime)"
}
