/*
 * replay.c - runs a libFuzzer harness over input files without libFuzzer, so that any
 * compiler can build it: `make test` replays the committed corpus (spec/fuzz/corpus/NAME/, where
 * every crash the fuzzer finds is kept) through each harness's checks.
 *   replay FILE-OR-DIRECTORY...
 * Prints how many inputs ran; a failed check aborts (exit status non-zero).
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *data;
    long size;
    if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 ||
        fseek(f, 0, SEEK_SET) != 0) {
        fprintf(stderr, "replay: cannot read %s\n", path);
        exit(2);
    }
    data = (uint8_t *)malloc((size_t)size + 1);
    if (data == NULL || fread(data, 1, (size_t)size, f) != (size_t)size) {
        fprintf(stderr, "replay: cannot read %s\n", path);
        exit(2);
    }
    fclose(f);
    LLVMFuzzerTestOneInput(data, (size_t)size);
    free(data);
    return 1;
}

static int run_path(const char *path)
{
    struct stat st;
    DIR *dir;
    struct dirent *e;
    int count = 0;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: no such file or directory: %s\n", path);
        exit(2);
    }
    if (!S_ISDIR(st.st_mode)) return run_file(path);
    dir = opendir(path);
    while (dir && (e = readdir(dir)) != NULL) {
        char full[4096];
        if (e->d_name[0] == '.') continue;
        snprintf(full, sizeof full, "%s/%s", path, e->d_name);
        count += run_path(full);
    }
    if (dir) closedir(dir);
    return count;
}

int main(int argc, char **argv)
{
    int k, count = 0;
    LLVMFuzzerInitialize(&argc, &argv);
    for (k = 1; k < argc; k++) count += run_path(argv[k]);
    printf("replayed %d inputs\n", count);
    return count > 0 ? 0 : 1;
}
