// Written by dev.commplan.bench.PlanSources (bench/src/main/java/dev/commplan/bench/PlanSources.java):
// do not edit; change the generator and run it again.
package dev.commplan.bench.plans;

import dev.commplan.annotations.AllReduce;
import dev.commplan.annotations.CommPlan;
import dev.commplan.annotations.Shape;
import dev.commplan.runtime.F32Buffer;

/**
 * 200 float buffers of {@code n} elements each, all-reduced (sum) in place, all in step 0: the
 * many-buffers case of the benchmark. The processor generates {@code Many200Plan}.
 */
@CommPlan(dims = {"n"})
public final class Many200 {

  @AllReduce
  @Shape("n")
  F32Buffer g000;

  @AllReduce
  @Shape("n")
  F32Buffer g001;

  @AllReduce
  @Shape("n")
  F32Buffer g002;

  @AllReduce
  @Shape("n")
  F32Buffer g003;

  @AllReduce
  @Shape("n")
  F32Buffer g004;

  @AllReduce
  @Shape("n")
  F32Buffer g005;

  @AllReduce
  @Shape("n")
  F32Buffer g006;

  @AllReduce
  @Shape("n")
  F32Buffer g007;

  @AllReduce
  @Shape("n")
  F32Buffer g008;

  @AllReduce
  @Shape("n")
  F32Buffer g009;

  @AllReduce
  @Shape("n")
  F32Buffer g010;

  @AllReduce
  @Shape("n")
  F32Buffer g011;

  @AllReduce
  @Shape("n")
  F32Buffer g012;

  @AllReduce
  @Shape("n")
  F32Buffer g013;

  @AllReduce
  @Shape("n")
  F32Buffer g014;

  @AllReduce
  @Shape("n")
  F32Buffer g015;

  @AllReduce
  @Shape("n")
  F32Buffer g016;

  @AllReduce
  @Shape("n")
  F32Buffer g017;

  @AllReduce
  @Shape("n")
  F32Buffer g018;

  @AllReduce
  @Shape("n")
  F32Buffer g019;

  @AllReduce
  @Shape("n")
  F32Buffer g020;

  @AllReduce
  @Shape("n")
  F32Buffer g021;

  @AllReduce
  @Shape("n")
  F32Buffer g022;

  @AllReduce
  @Shape("n")
  F32Buffer g023;

  @AllReduce
  @Shape("n")
  F32Buffer g024;

  @AllReduce
  @Shape("n")
  F32Buffer g025;

  @AllReduce
  @Shape("n")
  F32Buffer g026;

  @AllReduce
  @Shape("n")
  F32Buffer g027;

  @AllReduce
  @Shape("n")
  F32Buffer g028;

  @AllReduce
  @Shape("n")
  F32Buffer g029;

  @AllReduce
  @Shape("n")
  F32Buffer g030;

  @AllReduce
  @Shape("n")
  F32Buffer g031;

  @AllReduce
  @Shape("n")
  F32Buffer g032;

  @AllReduce
  @Shape("n")
  F32Buffer g033;

  @AllReduce
  @Shape("n")
  F32Buffer g034;

  @AllReduce
  @Shape("n")
  F32Buffer g035;

  @AllReduce
  @Shape("n")
  F32Buffer g036;

  @AllReduce
  @Shape("n")
  F32Buffer g037;

  @AllReduce
  @Shape("n")
  F32Buffer g038;

  @AllReduce
  @Shape("n")
  F32Buffer g039;

  @AllReduce
  @Shape("n")
  F32Buffer g040;

  @AllReduce
  @Shape("n")
  F32Buffer g041;

  @AllReduce
  @Shape("n")
  F32Buffer g042;

  @AllReduce
  @Shape("n")
  F32Buffer g043;

  @AllReduce
  @Shape("n")
  F32Buffer g044;

  @AllReduce
  @Shape("n")
  F32Buffer g045;

  @AllReduce
  @Shape("n")
  F32Buffer g046;

  @AllReduce
  @Shape("n")
  F32Buffer g047;

  @AllReduce
  @Shape("n")
  F32Buffer g048;

  @AllReduce
  @Shape("n")
  F32Buffer g049;

  @AllReduce
  @Shape("n")
  F32Buffer g050;

  @AllReduce
  @Shape("n")
  F32Buffer g051;

  @AllReduce
  @Shape("n")
  F32Buffer g052;

  @AllReduce
  @Shape("n")
  F32Buffer g053;

  @AllReduce
  @Shape("n")
  F32Buffer g054;

  @AllReduce
  @Shape("n")
  F32Buffer g055;

  @AllReduce
  @Shape("n")
  F32Buffer g056;

  @AllReduce
  @Shape("n")
  F32Buffer g057;

  @AllReduce
  @Shape("n")
  F32Buffer g058;

  @AllReduce
  @Shape("n")
  F32Buffer g059;

  @AllReduce
  @Shape("n")
  F32Buffer g060;

  @AllReduce
  @Shape("n")
  F32Buffer g061;

  @AllReduce
  @Shape("n")
  F32Buffer g062;

  @AllReduce
  @Shape("n")
  F32Buffer g063;

  @AllReduce
  @Shape("n")
  F32Buffer g064;

  @AllReduce
  @Shape("n")
  F32Buffer g065;

  @AllReduce
  @Shape("n")
  F32Buffer g066;

  @AllReduce
  @Shape("n")
  F32Buffer g067;

  @AllReduce
  @Shape("n")
  F32Buffer g068;

  @AllReduce
  @Shape("n")
  F32Buffer g069;

  @AllReduce
  @Shape("n")
  F32Buffer g070;

  @AllReduce
  @Shape("n")
  F32Buffer g071;

  @AllReduce
  @Shape("n")
  F32Buffer g072;

  @AllReduce
  @Shape("n")
  F32Buffer g073;

  @AllReduce
  @Shape("n")
  F32Buffer g074;

  @AllReduce
  @Shape("n")
  F32Buffer g075;

  @AllReduce
  @Shape("n")
  F32Buffer g076;

  @AllReduce
  @Shape("n")
  F32Buffer g077;

  @AllReduce
  @Shape("n")
  F32Buffer g078;

  @AllReduce
  @Shape("n")
  F32Buffer g079;

  @AllReduce
  @Shape("n")
  F32Buffer g080;

  @AllReduce
  @Shape("n")
  F32Buffer g081;

  @AllReduce
  @Shape("n")
  F32Buffer g082;

  @AllReduce
  @Shape("n")
  F32Buffer g083;

  @AllReduce
  @Shape("n")
  F32Buffer g084;

  @AllReduce
  @Shape("n")
  F32Buffer g085;

  @AllReduce
  @Shape("n")
  F32Buffer g086;

  @AllReduce
  @Shape("n")
  F32Buffer g087;

  @AllReduce
  @Shape("n")
  F32Buffer g088;

  @AllReduce
  @Shape("n")
  F32Buffer g089;

  @AllReduce
  @Shape("n")
  F32Buffer g090;

  @AllReduce
  @Shape("n")
  F32Buffer g091;

  @AllReduce
  @Shape("n")
  F32Buffer g092;

  @AllReduce
  @Shape("n")
  F32Buffer g093;

  @AllReduce
  @Shape("n")
  F32Buffer g094;

  @AllReduce
  @Shape("n")
  F32Buffer g095;

  @AllReduce
  @Shape("n")
  F32Buffer g096;

  @AllReduce
  @Shape("n")
  F32Buffer g097;

  @AllReduce
  @Shape("n")
  F32Buffer g098;

  @AllReduce
  @Shape("n")
  F32Buffer g099;

  @AllReduce
  @Shape("n")
  F32Buffer g100;

  @AllReduce
  @Shape("n")
  F32Buffer g101;

  @AllReduce
  @Shape("n")
  F32Buffer g102;

  @AllReduce
  @Shape("n")
  F32Buffer g103;

  @AllReduce
  @Shape("n")
  F32Buffer g104;

  @AllReduce
  @Shape("n")
  F32Buffer g105;

  @AllReduce
  @Shape("n")
  F32Buffer g106;

  @AllReduce
  @Shape("n")
  F32Buffer g107;

  @AllReduce
  @Shape("n")
  F32Buffer g108;

  @AllReduce
  @Shape("n")
  F32Buffer g109;

  @AllReduce
  @Shape("n")
  F32Buffer g110;

  @AllReduce
  @Shape("n")
  F32Buffer g111;

  @AllReduce
  @Shape("n")
  F32Buffer g112;

  @AllReduce
  @Shape("n")
  F32Buffer g113;

  @AllReduce
  @Shape("n")
  F32Buffer g114;

  @AllReduce
  @Shape("n")
  F32Buffer g115;

  @AllReduce
  @Shape("n")
  F32Buffer g116;

  @AllReduce
  @Shape("n")
  F32Buffer g117;

  @AllReduce
  @Shape("n")
  F32Buffer g118;

  @AllReduce
  @Shape("n")
  F32Buffer g119;

  @AllReduce
  @Shape("n")
  F32Buffer g120;

  @AllReduce
  @Shape("n")
  F32Buffer g121;

  @AllReduce
  @Shape("n")
  F32Buffer g122;

  @AllReduce
  @Shape("n")
  F32Buffer g123;

  @AllReduce
  @Shape("n")
  F32Buffer g124;

  @AllReduce
  @Shape("n")
  F32Buffer g125;

  @AllReduce
  @Shape("n")
  F32Buffer g126;

  @AllReduce
  @Shape("n")
  F32Buffer g127;

  @AllReduce
  @Shape("n")
  F32Buffer g128;

  @AllReduce
  @Shape("n")
  F32Buffer g129;

  @AllReduce
  @Shape("n")
  F32Buffer g130;

  @AllReduce
  @Shape("n")
  F32Buffer g131;

  @AllReduce
  @Shape("n")
  F32Buffer g132;

  @AllReduce
  @Shape("n")
  F32Buffer g133;

  @AllReduce
  @Shape("n")
  F32Buffer g134;

  @AllReduce
  @Shape("n")
  F32Buffer g135;

  @AllReduce
  @Shape("n")
  F32Buffer g136;

  @AllReduce
  @Shape("n")
  F32Buffer g137;

  @AllReduce
  @Shape("n")
  F32Buffer g138;

  @AllReduce
  @Shape("n")
  F32Buffer g139;

  @AllReduce
  @Shape("n")
  F32Buffer g140;

  @AllReduce
  @Shape("n")
  F32Buffer g141;

  @AllReduce
  @Shape("n")
  F32Buffer g142;

  @AllReduce
  @Shape("n")
  F32Buffer g143;

  @AllReduce
  @Shape("n")
  F32Buffer g144;

  @AllReduce
  @Shape("n")
  F32Buffer g145;

  @AllReduce
  @Shape("n")
  F32Buffer g146;

  @AllReduce
  @Shape("n")
  F32Buffer g147;

  @AllReduce
  @Shape("n")
  F32Buffer g148;

  @AllReduce
  @Shape("n")
  F32Buffer g149;

  @AllReduce
  @Shape("n")
  F32Buffer g150;

  @AllReduce
  @Shape("n")
  F32Buffer g151;

  @AllReduce
  @Shape("n")
  F32Buffer g152;

  @AllReduce
  @Shape("n")
  F32Buffer g153;

  @AllReduce
  @Shape("n")
  F32Buffer g154;

  @AllReduce
  @Shape("n")
  F32Buffer g155;

  @AllReduce
  @Shape("n")
  F32Buffer g156;

  @AllReduce
  @Shape("n")
  F32Buffer g157;

  @AllReduce
  @Shape("n")
  F32Buffer g158;

  @AllReduce
  @Shape("n")
  F32Buffer g159;

  @AllReduce
  @Shape("n")
  F32Buffer g160;

  @AllReduce
  @Shape("n")
  F32Buffer g161;

  @AllReduce
  @Shape("n")
  F32Buffer g162;

  @AllReduce
  @Shape("n")
  F32Buffer g163;

  @AllReduce
  @Shape("n")
  F32Buffer g164;

  @AllReduce
  @Shape("n")
  F32Buffer g165;

  @AllReduce
  @Shape("n")
  F32Buffer g166;

  @AllReduce
  @Shape("n")
  F32Buffer g167;

  @AllReduce
  @Shape("n")
  F32Buffer g168;

  @AllReduce
  @Shape("n")
  F32Buffer g169;

  @AllReduce
  @Shape("n")
  F32Buffer g170;

  @AllReduce
  @Shape("n")
  F32Buffer g171;

  @AllReduce
  @Shape("n")
  F32Buffer g172;

  @AllReduce
  @Shape("n")
  F32Buffer g173;

  @AllReduce
  @Shape("n")
  F32Buffer g174;

  @AllReduce
  @Shape("n")
  F32Buffer g175;

  @AllReduce
  @Shape("n")
  F32Buffer g176;

  @AllReduce
  @Shape("n")
  F32Buffer g177;

  @AllReduce
  @Shape("n")
  F32Buffer g178;

  @AllReduce
  @Shape("n")
  F32Buffer g179;

  @AllReduce
  @Shape("n")
  F32Buffer g180;

  @AllReduce
  @Shape("n")
  F32Buffer g181;

  @AllReduce
  @Shape("n")
  F32Buffer g182;

  @AllReduce
  @Shape("n")
  F32Buffer g183;

  @AllReduce
  @Shape("n")
  F32Buffer g184;

  @AllReduce
  @Shape("n")
  F32Buffer g185;

  @AllReduce
  @Shape("n")
  F32Buffer g186;

  @AllReduce
  @Shape("n")
  F32Buffer g187;

  @AllReduce
  @Shape("n")
  F32Buffer g188;

  @AllReduce
  @Shape("n")
  F32Buffer g189;

  @AllReduce
  @Shape("n")
  F32Buffer g190;

  @AllReduce
  @Shape("n")
  F32Buffer g191;

  @AllReduce
  @Shape("n")
  F32Buffer g192;

  @AllReduce
  @Shape("n")
  F32Buffer g193;

  @AllReduce
  @Shape("n")
  F32Buffer g194;

  @AllReduce
  @Shape("n")
  F32Buffer g195;

  @AllReduce
  @Shape("n")
  F32Buffer g196;

  @AllReduce
  @Shape("n")
  F32Buffer g197;

  @AllReduce
  @Shape("n")
  F32Buffer g198;

  @AllReduce
  @Shape("n")
  F32Buffer g199;
}
