# CLI tests of `ncclbpf objdump` and `ncclbpf test-run` on the shipped policies: every good policy
# runs with the expected decisions (the policy's unit tests, as an author would write them).
# Each test also runs with the ASan/UBSan build of the CLI when sanitizers are on.
if(NCCLBPF_BUILD_POLICIES AND TARGET ncclbpf)
  set(LDR_POL ${NCCLBPF_POLICY_DIR})
  set(LDR_OBJ ${PROJECT_BINARY_DIR}/tests/loader/bpf)

  # ldr_cli(NAME ARGS ... REGEX <regex> [STATUS n]): `ncclbpf ARGS` (and its ASan twin) exits
  # with status n (default 0) and prints what regex matches.
  function(ldr_cli name)
    cmake_parse_arguments(C "" "REGEX;STATUS" "ARGS" ${ARGN})
    if(NOT DEFINED C_STATUS)
      set(C_STATUS 0)
    endif()
    ncclbpf_add_twin_test(NAME cli_${name} COMMAND $<TARGET_FILE:ncclbpf> ${C_ARGS}
      STATUS ${C_STATUS} OUTPUT "${C_REGEX}" LABELS "loader;cli" TIMEOUT 60)
  endfunction()

  set(TR test-run)
  # noop: every decision left to NCCL.
  ldr_cli(tr_noop ARGS ${TR} ${LDR_POL}/noop.o --prog noop --ctx n_bytes=1024
    REGEX "return 0\n.*algorithm += -1 .*\n  protocol += -1 .*\n  n_channels += 0 ")
  # size_aware: small -> TREE/LL; TREE/LL unavailable -> RING/LL; mid -> RING/LL128; large ->
  # RING/SIMPLE, or TREE/SIMPLE when RING/SIMPLE is NA; nothing available -> NCCL decides;
  # a table of one algorithm row -> that row only.
  ldr_cli(tr_size_small ARGS ${TR} ${LDR_POL}/size_aware.o --prog size_aware --ctx n_bytes=1024
    REGEX "algorithm += 0 TREE\n  protocol += 0 LL\n  n_channels += 0")
  ldr_cli(tr_size_small_na ARGS ${TR} ${LDR_POL}/size_aware.o --prog size_aware
    --ctx n_bytes=65536,cost_ns[0][0]=NA
    REGEX "algorithm += 1 RING\n  protocol += 0 LL\n")
  ldr_cli(tr_size_mid ARGS ${TR} ${LDR_POL}/size_aware.o --prog size_aware --ctx n_bytes=1048576
    REGEX "algorithm += 1 RING\n  protocol += 1 LL128\n")
  ldr_cli(tr_size_large ARGS ${TR} ${LDR_POL}/size_aware.o --prog size_aware
    --ctx n_bytes=0x4000000
    REGEX "algorithm += 1 RING\n  protocol += 2 SIMPLE\n")
  ldr_cli(tr_size_large_na ARGS ${TR} ${LDR_POL}/size_aware.o --prog size_aware
    --ctx n_bytes=0x4000000,cost_ns[1][2]=NA
    REGEX "algorithm += 0 TREE\n  protocol += 2 SIMPLE\n")
  ldr_cli(tr_size_all_na ARGS ${TR} ${LDR_POL}/size_aware.o --prog size_aware
    --ctx n_bytes=100,cost_ns=NA
    REGEX "algorithm += -1 .*DEFAULT.*\n  protocol += -1 ")
  ldr_cli(tr_size_one_algo ARGS ${TR} ${LDR_POL}/size_aware.o --prog size_aware
    --ctx n_bytes=1048576,num_algo=1
    REGEX "algorithm += 0 TREE\n  protocol += 1 LL128\n")
  # table_tuner: rows from the object's .data map; beyond the table NCCL decides.
  ldr_cli(tr_table_4k ARGS ${TR} ${LDR_POL}/table_tuner.o --prog table_tuner --ctx n_bytes=4096
    REGEX "algorithm += 0 TREE\n  protocol += 0 LL\n  n_channels += 2\n")
  ldr_cli(tr_table_100k ARGS ${TR} ${LDR_POL}/table_tuner.o --prog table_tuner
    --ctx n_bytes=100000
    REGEX "algorithm += 1 RING\n  protocol += 1 LL128\n  n_channels += 8\n")
  ldr_cli(tr_table_8m ARGS ${TR} ${LDR_POL}/table_tuner.o --prog table_tuner
    --ctx n_bytes=8388608
    REGEX "algorithm += 1 RING\n  protocol += 2 SIMPLE\n  n_channels += 16 ")
  ldr_cli(tr_table_huge ARGS ${TR} ${LDR_POL}/table_tuner.o --prog table_tuner
    --ctx n_bytes=0x100000000
    REGEX "algorithm += -1 .*\n  protocol += -1 .*\n  n_channels += 0 ")
  # profiler_latency: a finished 1 MiB AllReduce of 5000 ns lands in bucket 20 of its
  # communicator and rank with count 1 and total/min/max/last 5000, and one ring-buffer record;
  # other events change nothing.
  ldr_cli(tr_prof_end ARGS ${TR} ${LDR_POL}/profiler_latency.o --prog profiler_latency
    --ctx event=COLL_END,comm_id=0x1234,coll_type=ALLREDUCE,n_bytes=1048576,duration_ns=5000
    REGEX "latency: added +key 34120000 00000000 00000000 04000000 14000000 00000000\n +value 01000000 00000000 88130000 00000000 88130000 00000000 88130000 00000000 88130000 00000000 00000000 00000000\n +events: record 0 \\(64 bytes\\) 34120000")
  ldr_cli(tr_prof_start ARGS ${TR} ${LDR_POL}/profiler_latency.o --prog profiler_latency
    --ctx event=COLL_START,n_bytes=1048576,duration_ns=5000
    REGEX "maps changed:\n  \\(none\\)")
  # The features object: a net program's verdict, global data written through a subprogram.
  ldr_cli(tr_net_deny ARGS ${TR} ${LDR_OBJ}/features.o --prog on_connect --ctx peer=3
    REGEX "return 1\n")
  ldr_cli(tr_subprog_data ARGS ${TR} ${LDR_OBJ}/features.o --prog second --ctx n_ranks=5
    REGEX "n_channels += 1249 .*\\.data: changed +key 00000000 \\(0\\)\n +value 4d000000 00000000 \\(77\\)\n +-> value 4e000000 00000000 \\(78\\)")
  ldr_cli(tr_ctx_hex ARGS ${TR} ${LDR_OBJ}/features.o --prog on_connect
    --ctx-hex 0000000000000000000000000000000000000000000000000000000000000000000000000000000003000000
    REGEX "return 1\n")
  ldr_cli(tr_repeat ARGS ${TR} ${LDR_POL}/noop.o --prog noop --repeat 1000
    REGEX "1000 runs, [0-9.]+ ns per run")
  # The same decisions from the JIT-compiled programs.
  ldr_cli(tr_jit_size_mid ARGS ${TR} ${LDR_POL}/size_aware.o --prog size_aware --jit
    --ctx n_bytes=1048576,cost_ns[1][1]=NA
    REGEX "algorithm += 0 TREE\n  protocol += 1 LL128\n")
  ldr_cli(tr_jit_table ARGS ${TR} ${LDR_POL}/table_tuner.o --prog table_tuner --jit
    --ctx n_bytes=8388608 --repeat 100
    REGEX "jit: 100 runs.*algorithm += 1 RING\n  protocol += 2 SIMPLE\n  n_channels += 16 ")
  ldr_cli(tr_jit_prof ARGS ${TR} ${LDR_POL}/profiler_latency.o --prog profiler_latency --jit
    --ctx event=COLL_END,comm_id=7,coll_type=REDUCE,n_bytes=0,duration_ns=9
    REGEX "latency: added +key 07000000 00000000 00000000 01000000 00000000 00000000\n +value 01000000 00000000 09000000 00000000 09000000 00000000 09000000 00000000 09000000 00000000 00000000 00000000\n +events: record 0 \\(64 bytes\\) 07000000")
  ldr_cli(tr_jit_subprog ARGS ${TR} ${LDR_OBJ}/features.o --prog second --jit --ctx n_ranks=1
    REGEX "n_channels += 1237 ")
  # NCCL's spellings, --prog left out for a one-program object, the inputs printed with the
  # defaults marked; values out of a field's range refused; --prog needed with several programs.
  ldr_cli(tr_inputs ARGS ${TR} ${LDR_POL}/size_aware.o --ctx n_bytes=1048576,coll_type=AllReduce
    REGEX "inputs:\n  comm_id += 0  \\(default\\)\n  n_bytes += 1048576 \\(0x100000\\)\n  seq += 0  \\(default\\)\n  coll_type += 4 ALLREDUCE\n.*  num_algo += 7  \\(default\\)\n  num_proto += 3  \\(default\\)\n  cost_ns += 0 0 0 \\| 0 0 0 \\|[ 0|]*  \\(default\\)\n.*outputs:\n  algorithm += 1 RING\n  protocol += 1 LL128\n")
  ldr_cli(tr_names_any_case ARGS ${TR} ${LDR_POL}/size_aware.o
    --ctx n_bytes=1048576,cost_ns[1][1]=NA,coll_type=ReduceScatter
    REGEX "coll_type += 3 REDUCESCATTER\n.*cost_ns += 0 0 0 \\| 0 NA 0 \\|.*algorithm += 0 TREE\n  protocol += 1 LL128\n")
  ldr_cli(tr_range_unsigned STATUS 2 ARGS ${TR} ${LDR_POL}/size_aware.o --ctx n_bytes=-1
    REGEX "n_bytes=-1: the field is unsigned")
  ldr_cli(tr_range_ids STATUS 2 ARGS ${TR} ${LDR_POL}/size_aware.o --ctx coll_type=9
    REGEX "coll_type=9 is out of range \\(0..4\\)")
  ldr_cli(tr_range_size STATUS 2 ARGS ${TR} ${LDR_POL}/size_aware.o --ctx n_ranks=0x100000000
    REGEX "n_ranks=0x100000000 does not fit its 4 bytes")
  ldr_cli(tr_prog_needed STATUS 1 ARGS ${TR} ${LDR_OBJ}/features.o
    REGEX "features.o has 4 programs, --prog picks one: first second prof on_connect")
  ldr_cli(tr_bad_field STATUS 2 ARGS ${TR} ${LDR_POL}/noop.o --prog noop --ctx bytes=1
    REGEX "no field 'bytes'. fields: comm_id n_bytes")
  # An index is a plain number: 2^32 used to wrap onto cost_ns[0][0] and run.
  ldr_cli(tr_index_wraps STATUS 2 ARGS ${TR} ${LDR_POL}/size_aware.o --prog size_aware
    --ctx cost_ns[4294967296][0]=1 REGEX "--ctx 'cost_ns\\[4294967296\\]\\[0\\]': bad index; usage: ")
  ldr_cli(tr_bad_ctx_hex STATUS 2 ARGS ${TR} ${LDR_POL}/noop.o --ctx-hex 0g
    REGEX "--ctx-hex: .*'g'.*; usage: ncclbpf test-run ")
  ldr_cli(tr_bad_prog STATUS 1 ARGS ${TR} ${LDR_POL}/noop.o --prog nope
    REGEX "no program 'nope'. programs: noop")
  ldr_cli(tr_bad_index STATUS 2 ARGS ${TR} ${LDR_POL}/size_aware.o --prog size_aware
    --ctx cost_ns[7][0]=1 REGEX "'cost_ns' is \\[7\\]\\[3\\]")
  # test-run loads through the verifier: unsafe policies never run, the reason names the line.
  ldr_cli(tr_unsafe_null STATUS 1 ARGS ${TR} ${LDR_POL}/unsafe/null_deref.o --prog null_deref
    REGEX "program 'null_deref' \\(section 'profiler'\\): line 18: `\\*v \\+= 1..*map_value_or_null")
  ldr_cli(tr_unsafe_rank STATUS 1 ARGS ${TR} ${LDR_POL}/unsafe/rank_dependent.o --prog decide
    REGEX "program 'decide' .*rank-local map `avg_lat`")
  ldr_cli(tr_rejected_object STATUS 1 ARGS ${TR} ${LDR_OBJ}/bad_section.o --prog wrong
    REGEX "section 'xdp': unknown program type")

  # objdump: programs, maps with initial data, disassembly with source and annotations.
  ldr_cli(objdump_features ARGS objdump ${LDR_OBJ}/features.o
    REGEX "4 programs, 7 maps.*  1   tuner +second +tuner +[0-9]+ +[0-9]+  thrice_plus,twice\n.*  3   events +ringbuf +maps +0 +0 +4096  0x0\n  4   \\.rodata +array +rodata +4 +4 +1  0x80 \\(rdonly_prog\\)\n    initial data \\(4 bytes\\):\n      0000: d2 04 00 00 .*<thrice_plus>:\n. static __attribute__\\(\\(noinline\\)\\) __u64 thrice_plus\\(__u64 x\\)  \\[features.c:[0-9]+\\].*. counter \\+= 1..*# &'\\.data'\\[0\\].*call [0-9]+    # -> twice")
  ldr_cli(objdump_policy ARGS objdump ${LDR_POL}/table_tuner.o
    REGEX "table_tuner +tuner +[0-9]+ +[0-9]+  find_row\n.*\\.data +array +data +4 +144 +1  0x0\n    initial data \\(144 bytes\\):\n      0000: 00 10 00 00 00 00 00 00 00 00 00 00 00 00 00 00")
  ldr_cli(objdump_bad STATUS 1 ARGS objdump ${LDR_OBJ}/bad_extern.o
    REGEX "undefined symbol 'CONFIG_HZ'")
  # objdump --json, parsed and checked (tests/cli/cli_objdump_json.sh)
  ncclbpf_add_twin_test(NAME cli_objdump_json
    COMMAND bash ${PROJECT_SOURCE_DIR}/tests/cli/cli_objdump_json.sh $<TARGET_FILE:ncclbpf>
            ${LDR_OBJ} ${PROJECT_SOURCE_DIR}/tests/cli/json_expect.py
    OUTPUT "cli_objdump_json: all checks passed" LABELS "loader;cli" TIMEOUT 60)
endif()
