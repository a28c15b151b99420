# Shared by the plot scripts (loaded, never run on its own: scripts/bench runs <name>.gp only
# when <name>.csv exists). Each script is run as
#   gnuplot -e "dir='RESULTS_DIR'" bench/plots/<name>.gp
# and writes RESULTS_DIR/<name>.png from RESULTS_DIR/<name>.csv (header row, comma-separated).
if (!exists("dir")) dir = "."
set datafile separator comma
set datafile columnheaders
set terminal pngcairo size 1000,650 font "sans,10" noenhanced
set grid
set key outside bottom center horizontal

# True when the file exists and is not empty: plots skip CSVs that are missing.
has(file) = system("test -s '".file."' && echo 1 || echo 0") + 0

# Distinct values of column `col` (1-based) of a CSV, in order of appearance, as a gnuplot word
# list; spaces inside a value become "~" (unspace() turns them back).
values_of(file, col) = system(sprintf("tail -n +2 '%s' | cut -d, -f%d | awk '!seen[$0]++' | tr ' ' '~' | tr '\\n' ' '", file, col))
unspace(s) = strstrt(s, "~") == 0 ? s : s[1:strstrt(s, "~") - 1]." ".unspace(s[strstrt(s, "~") + 1:])

# A data source of the file's header and the rows whose column `col` equals `value` (filtering
# rows out inside `using` would break the lines between the remaining points).
rows(file, col, value) = sprintf("< awk -F, -v v='%s' 'NR == 1 || $%d == v' '%s'", value, col, file)
# The same with two conditions.
rows2(file, col, value, col2, value2) = \
  sprintf("< awk -F, -v v='%s' -v w='%s' 'NR == 1 || ($%d == v && $%d == w)' '%s'", value, value2, col, col2, file)
