/* Runs a libFuzzer target's entry point over files, without libFuzzer: the committed corpus
 * (tests/fuzz/corpus/TARGET: seeds and every input that ever crashed the target) replayed in
 * the normal gcc build and its ASan twin, so a regression of a fixed crash fails the main
 * suite even where clang's libFuzzer is not built.
 *
 *   fuzz_replay_TARGET DIR|FILE...
 * Exit status 0 when every input ran (the target aborts on what it checks); 1 when none was
 * found. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return 0;
	static uint8_t buf[1 << 20];
	size_t n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	/* libFuzzer hands the target a buffer of exactly the input's size */
	uint8_t *copy = malloc(n ? n : 1);
	memcpy(copy, buf, n);
	LLVMFuzzerTestOneInput(copy, n);
	free(copy);
	return 1;
}

int main(int argc, char **argv)
{
	int inputs = 0;
	for (int k = 1; k < argc; k++) {
		struct stat st;
		if (stat(argv[k], &st) || !S_ISDIR(st.st_mode)) {
			inputs += replay_file(argv[k]);
			continue;
		}
		DIR *d = opendir(argv[k]);
		struct dirent *e;
		while (d && (e = readdir(d))) {
			char path[4096];
			if (e->d_name[0] == '.' || !strcmp(e->d_name, "README.md"))
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[k], e->d_name);
			inputs += replay_file(path);
		}
		if (d)
			closedir(d);
	}
	printf("replayed %d inputs\n", inputs);
	return inputs ? 0 : 1;
}
