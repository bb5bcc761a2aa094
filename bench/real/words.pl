# words.pl FILE: word and bigram counts of a text, for bench/workloads.sh
# (the text comes from bench/inputs.sh).  Every word read is a string of
# its own, every bigram a new key: the hashes grow to hundreds of
# thousands of entries.  Prints the ten most frequent of each.
use strict;
use warnings;

my (%count, %bigram);
my $words = 0;
while (my $line = <>) {
    my @w = split ' ', lc $line;
    for my $i (0 .. $#w) {
        $count{$w[$i]}++;
        $bigram{"$w[$i - 1] $w[$i]"}++ if $i;
    }
    $words += @w;
}
# The ten most frequent in one pass (ties by name): the counting is the
# workload, not a sort of half a million keys.
sub top10 {
    my ($h) = @_;
    my @top;
    while (my ($k, $v) = each %$h) {
        next if @top == 10 && ($v < $h->{$top[-1]} || ($v == $h->{$top[-1]} && $k gt $top[-1]));
        @top = (sort { $h->{$b} <=> $h->{$a} || $a cmp $b } @top, $k)[0 .. (@top < 10 ? @top : 9)];
    }
    return @top;
}
my @top = top10(\%count);
my @top2 = top10(\%bigram);
print "words $words distinct ", scalar(keys %count), " bigrams ", scalar(keys %bigram), "\n";
print "$_ $count{$_}\n" for @top;
print "$_ $bigram{$_}\n" for @top2;
