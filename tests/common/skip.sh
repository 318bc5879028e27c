# Sourced by shell tests (see skip.h): `skip_test ORACLE WHY` ends the test as skipped (exit 77),
# or failed when NCCLBPF_REQUIRE_ORACLES names ORACLE.
skip_test() {
	case ",${NCCLBPF_REQUIRE_ORACLES:-}," in
	*",$1,"*)
		echo "FAIL (required oracle): $1 missing: $2"
		exit 1
		;;
	esac
	echo "SKIP: $1 missing: $2"
	exit 77
}
